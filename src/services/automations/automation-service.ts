import { and, eq, ne } from 'drizzle-orm';
import { db, transaction, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { automations, webhookEndpoints, type AutomationAction } from '../../db/schema/index.js';
import { canSeeVenue, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { AutomationConditions } from '../../lib/automation-conditions.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import { annulPendingDeliveries } from '../webhooks/delivery-state.js';
import { dropAnnulledJobs } from '../../jobs/webhook-delivery-job.js';
import type { AutomationRow } from './automation-json.js';

export interface AutomationInput {
  venueId: string;
  name: string;
  eventTypes: string[];
  conditions: AutomationConditions;
  action: AutomationAction;
  status: 'active' | 'inactive';
}

export type AutomationPatch = Partial<Omit<AutomationInput, 'venueId'>>;

export async function getVisibleAutomation(auth: AuthContext, id: string, conn: DbOrTx = db()): Promise<AutomationRow> {
  const [row] = await conn
    .select()
    .from(automations)
    .where(and(eq(automations.id, id), eq(automations.organisationId, auth.organisationId)));
  if (!row || !canSeeVenue(auth, row.venueId)) throw ApiError.notFound('Automation');
  return row;
}

/** A destination named in an action must be one of the venue's own. */
async function checkActionEndpoint(action: AutomationAction, venueId: string, conn: DbOrTx): Promise<void> {
  if (!action.endpointId) return;
  const [endpoint] = await conn
    .select({ venueId: webhookEndpoints.venueId })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, action.endpointId));
  if (endpoint?.venueId !== venueId)
    throw ApiError.invalid(['action.endpointId'], 'action.endpointId is not a webhook endpoint of this venue.');
}

function checkPartySizes(conditions: AutomationConditions): void {
  if (conditions.partySizeMin !== null && conditions.partySizeMax !== null && conditions.partySizeMin > conditions.partySizeMax) {
    throw ApiError.invalid(
      ['conditions.partySizeMin', 'conditions.partySizeMax'],
      'conditions.partySizeMin must not exceed conditions.partySizeMax.',
    );
  }
}

export async function createAutomation(auth: AuthContext, input: AutomationInput): Promise<AutomationRow> {
  const venue = await getVisibleVenue(auth, input.venueId);
  checkPartySizes(input.conditions);
  await checkActionEndpoint(input.action, venue.id, db());
  const [row] = await db()
    .insert(automations)
    .values({ ...input, organisationId: venue.organisationId })
    .returning();
  return row;
}

export async function listAutomations(auth: AuthContext, query: ListQuery & { venueId?: string; status?: AutomationRow['status'] }) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  // Archived automations are hidden unless asked for (status=archived) or when syncing (changedAfter).
  const statusFilter = query.status
    ? eq(automations.status, query.status)
    : query.changedAfter
      ? undefined
      : ne(automations.status, 'archived');
  return fetchPage<AutomationRow>({
    query,
    idColumn: automations.id,
    naturalOrder: [{ column: automations.createdAt, kind: 'instant', read: (a) => a.createdAt }],
    updatedAt: { column: automations.updatedAt, kind: 'instant', read: (a) => a.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(automations)
        .where(
          and(
            eq(automations.organisationId, auth.organisationId),
            visibleVenueIds(auth, automations.venueId),
            query.venueId ? eq(automations.venueId, query.venueId) : undefined,
            statusFilter,
            keyset,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/**
 * Changes an automation; leaving `active` annuls its deliveries waiting for an attempt in the same
 * transaction. The row lock orders this against worker-events, which reads active automations
 * `for share` while it creates deliveries.
 */
async function changeAutomation(
  auth: AuthContext,
  id: string,
  patch: Omit<AutomationPatch, 'status'> & { status?: AutomationRow['status'] },
  log: Logger,
): Promise<AutomationRow> {
  const { row, annulled } = await transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(automations)
      .where(and(eq(automations.id, id), eq(automations.organisationId, auth.organisationId)))
      .for('update');
    if (!current || !canSeeVenue(auth, current.venueId)) throw ApiError.notFound('Automation');
    if (current.status === 'archived') {
      if (patch.status === 'archived') return { row: current, annulled: [] };
      throw ApiError.invalid(['status'], 'An archived automation cannot be changed.', { reason: 'automation_archived' });
    }
    checkPartySizes({ ...current.conditions, ...patch.conditions });
    if (patch.action) await checkActionEndpoint(patch.action, current.venueId, tx);
    const [row] = await tx
      .update(automations)
      .set({ ...patch, updatedAt: nextUpdatedAt(automations.updatedAt) })
      .where(eq(automations.id, id))
      .returning();
    const leavesActive = current.status === 'active' && row.status !== 'active';
    return { row, annulled: leavesActive ? await annulPendingDeliveries({ automationId: id }, tx) : [] };
  }, auth.signal);
  dropAnnulledJobs(annulled, log);
  return row;
}

export function updateAutomation(auth: AuthContext, id: string, patch: AutomationPatch, log: Logger = logger): Promise<AutomationRow> {
  return changeAutomation(auth, id, patch, log);
}

/** DELETE archives: the automation stays readable, never runs again and its waiting deliveries are annulled. */
export function archiveAutomation(auth: AuthContext, id: string, log: Logger = logger): Promise<AutomationRow> {
  return changeAutomation(auth, id, { status: 'archived' }, log);
}
