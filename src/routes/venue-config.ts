import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/define-route.js';
import { hhmm, isoDate } from '../core/validation.js';
import { listQuerySchema } from '../services/pagination.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { closureJson, closureKind, closureSchema, type ClosureFields, type ClosureRow } from '../services/venue-config/closure-rules.js';
import {
  pacingRuleJson,
  pacingRuleKind,
  pacingRuleSchema,
  type PacingRuleFields,
  type PacingRuleRow,
} from '../services/venue-config/pacing-rules.js';
import { shiftJson, shiftKind, shiftSchema, type ShiftFields, type ShiftRow } from '../services/venue-config/shift-rules.js';
import {
  turnTimeRuleJson,
  turnTimeRuleKind,
  turnTimeRuleSchema,
  type TurnTimeRuleFields,
  type TurnTimeRuleRow,
} from '../services/venue-config/turn-time-rules.js';
import {
  createRule,
  deleteRule,
  getRule,
  listRules,
  updateRule,
  type RuleKind,
  type RuleRow,
} from '../services/venue-config/venue-rules.js';

/**
 * An array of scalars validated as one field: a bad item names the array (`daysOfWeek`), not
 * `daysOfWeek.3`, since the array is what the client has to correct.
 */
export function listOf<T extends z.ZodType>(item: T, options: { min?: number; unique?: boolean; what: string }) {
  return z
    .array(z.unknown())
    .min(options.min ?? 0)
    .describe(`Each item: ${options.what}${options.unique ? ', without repeats' : ''}.`)
    .superRefine((values, ctx) => {
      const bad = values.findIndex((v) => !item.safeParse(v).success);
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `item ${bad} is not ${options.what}` });
      else if (options.unique && new Set(values).size !== values.length) ctx.addIssue({ code: 'custom', message: 'items must be unique' });
    })
    .transform((values) => values as z.output<T>[]);
}

const venueParams = z.object({ id: z.uuid() });
const ruleParams = z.object({ id: z.uuid(), ruleId: z.uuid() });

const name = z.string().trim().min(1).max(200);
const partySize = z.number().int().min(1).max(500);
const shiftId = z.uuid();

const shiftFields = {
  name,
  daysOfWeek: listOf(z.number().int().min(1).max(7), { min: 1, unique: true, what: 'an ISO day 1 (Monday) to 7 (Sunday)' }),
  startTime: hhmm,
  lastSeatingTime: hhmm,
  endTime: hhmm,
  validFrom: isoDate.nullable(),
  validTo: isoDate.nullable(),
  isActive: z.boolean(),
};

const closureFields = {
  from: isoDate,
  to: isoDate,
  shiftIds: listOf(shiftId, { unique: true, what: 'a shift id' }),
  reason: z.string().trim().min(1).max(500).nullable(),
};

const turnTimeRuleFields = {
  shiftId: shiftId.nullable(),
  minPartySize: partySize,
  maxPartySize: partySize,
  durationMinutes: z.number().int().min(1).max(1440),
};

const pacingRuleFields = {
  shiftId,
  isEnabled: z.boolean(),
  maxCovers: z.number().int().min(1).max(100_000),
  windowMinutes: z.number().int().min(1).max(1440),
};

interface RuleResource<Row extends RuleRow & Fields, Fields extends object> {
  /** Path segment under /venues/:id. */
  segment: string;
  /** Key of the single-resource response. */
  key: string;
  label: string;
  /** The resource in operationIds, e.g. `Shift` → listShifts, createShift. */
  name: string;
  schema: z.ZodType;
  kind: RuleKind<Row, Fields>;
  toJson: (row: Row) => Record<string, unknown>;
  createBody: z.ZodType<Partial<Fields>>;
  patchBody: z.ZodType<Partial<Fields>>;
  /** The complete rule from a create body: the optional fields' defaults. */
  complete: (body: Partial<Fields>) => Fields;
}

/** GET/POST /venues/:id/<kind>, GET/PATCH/DELETE /venues/:id/<kind>/:ruleId (docs/venue-configuration.md). */
function ruleRoutes<Row extends RuleRow & Fields, Fields extends object>(r: RuleResource<Row, Fields>): AnyRoute[] {
  const listPath = `/venues/:id/${r.segment}`;
  const itemPath = `${listPath}/:ruleId`;
  const single = keyed(r.key, r.schema);
  return [
    defineRoute({
      method: 'get',
      path: listPath,
      tag: 'Venue configuration',
      summary: `List the ${r.label}s of a venue`,
      scope: 'venues:read',
      params: venueParams,
      query: listQuerySchema,
      operationId: `list${r.name}s`,
      responses: { 200: pageOf(r.schema) },
      handler: async ({ auth, params, query, services }) => {
        const page = await listRules(r.kind, auth, params.id, { ...query, cursorKey: services.cursorKey });
        return { body: { data: page.rows.map(r.toJson), nextCursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'post',
      path: listPath,
      tag: 'Venue configuration',
      summary: `Create a ${r.label}`,
      scope: 'venues:write',
      params: venueParams,
      body: r.createBody,
      successStatus: 201,
      operationId: `create${r.name}`,
      responses: { 201: single },
      handler: async ({ auth, params, body }) => ({
        body: { [r.key]: r.toJson(await createRule(r.kind, auth, params.id, r.complete(body))) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: itemPath,
      tag: 'Venue configuration',
      summary: `Read a ${r.label}`,
      scope: 'venues:read',
      params: ruleParams,
      operationId: `get${r.name}`,
      responses: { 200: single },
      handler: async ({ auth, params }) => ({ body: { [r.key]: r.toJson(await getRule(r.kind, auth, params.id, params.ruleId)) } }),
    }),
    defineRoute({
      method: 'patch',
      path: itemPath,
      tag: 'Venue configuration',
      summary: `Change a ${r.label}`,
      description: 'Only the fields sent change; the rule as it becomes is validated as a whole.',
      scope: 'venues:write',
      params: ruleParams,
      body: r.patchBody,
      operationId: `update${r.name}`,
      responses: { 200: single },
      handler: async ({ auth, params, body }) => ({
        body: { [r.key]: r.toJson(await updateRule(r.kind, auth, params.id, params.ruleId, body)) },
      }),
    }),
    defineRoute({
      method: 'delete',
      path: itemPath,
      tag: 'Venue configuration',
      summary: `Delete a ${r.label}`,
      description: 'Answers 204 with no body.',
      scope: 'venues:write',
      params: ruleParams,
      successStatus: 204,
      operationId: `delete${r.name}`,
      responses: { 204: null },
      handler: async ({ auth, params }) => {
        await deleteRule(r.kind, auth, params.id, params.ruleId);
        return { status: 204 };
      },
    }),
  ];
}

export const venueConfigRoutes: AnyRoute[] = [
  ...ruleRoutes<ShiftRow, ShiftFields>({
    segment: 'shifts',
    key: 'shift',
    label: 'shift',
    name: 'Shift',
    schema: shiftSchema,
    kind: shiftKind,
    toJson: shiftJson,
    createBody: z.object({
      ...shiftFields,
      validFrom: shiftFields.validFrom.optional(),
      validTo: shiftFields.validTo.optional(),
      isActive: shiftFields.isActive.optional(),
    }),
    patchBody: z.object(shiftFields).partial(),
    complete: (body) => ({ validFrom: null, validTo: null, isActive: true, ...body }) as ShiftFields,
  }),
  ...ruleRoutes<ClosureRow, ClosureFields>({
    segment: 'closures',
    key: 'closure',
    label: 'closure',
    name: 'Closure',
    schema: closureSchema,
    kind: closureKind,
    toJson: closureJson,
    createBody: z.object({ ...closureFields, shiftIds: closureFields.shiftIds.optional(), reason: closureFields.reason.optional() }),
    patchBody: z.object(closureFields).partial(),
    complete: (body) => ({ shiftIds: [], reason: null, ...body }) as ClosureFields,
  }),
  ...ruleRoutes<TurnTimeRuleRow, TurnTimeRuleFields>({
    segment: 'turn-time-rules',
    key: 'turnTimeRule',
    label: 'turn-time rule',
    name: 'TurnTimeRule',
    schema: turnTimeRuleSchema,
    kind: turnTimeRuleKind,
    toJson: turnTimeRuleJson,
    createBody: z.object({ ...turnTimeRuleFields, shiftId: turnTimeRuleFields.shiftId.optional() }),
    patchBody: z.object(turnTimeRuleFields).partial(),
    complete: (body) => ({ shiftId: null, ...body }) as TurnTimeRuleFields,
  }),
  ...ruleRoutes<PacingRuleRow, PacingRuleFields>({
    segment: 'pacing-rules',
    key: 'pacingRule',
    label: 'pacing rule',
    name: 'PacingRule',
    schema: pacingRuleSchema,
    kind: pacingRuleKind,
    toJson: pacingRuleJson,
    createBody: z.object({ ...pacingRuleFields, isEnabled: pacingRuleFields.isEnabled.optional() }),
    patchBody: z.object(pacingRuleFields).partial(),
    complete: (body) => ({ isEnabled: true, ...body }) as PacingRuleFields,
  }),
];
