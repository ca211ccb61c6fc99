import { and, eq, isNull, ne } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../db/client.js';
import { turnTimeRules } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { assertShiftsOfVenue } from './shift-rules.js';
import type { RuleKind } from './venue-rules.js';

export type TurnTimeRuleRow = typeof turnTimeRules.$inferSelect;

export interface TurnTimeRuleFields {
  shiftId: string | null;
  minPartySize: number;
  maxPartySize: number;
  durationMinutes: number;
}

export const turnTimeRuleSchema = component(
  'TurnTimeRule',
  z.object({
    id: uuid,
    venueId: uuid,
    shiftId: uuid.nullable().describe('null: venue-wide'),
    minPartySize: z.number().int(),
    maxPartySize: z.number().int(),
    durationMinutes: z.number().int(),
    updatedAt: instant,
  }),
  'How long a party of a size range keeps its table (docs/venue-configuration.md).',
);

export function turnTimeRuleJson(r: TurnTimeRuleRow): z.output<typeof turnTimeRuleSchema> {
  return {
    id: r.id,
    venueId: r.venueId,
    shiftId: r.shiftId,
    minPartySize: r.minPartySize,
    maxPartySize: r.maxPartySize,
    durationMinutes: r.durationMinutes,
    updatedAt: r.updatedAt.toISOString(),
  };
}

/**
 * Party-size ranges of one scope (one shift, or venue-wide) may not overlap: the duration of a
 * party must follow from the rules without a tie-break (docs/venue-configuration.md only ranks shift over venue).
 */
async function checkTurnTimeRule(tx: Tx, venueId: string, rule: TurnTimeRuleFields, ruleId: string | null): Promise<void> {
  if (rule.minPartySize > rule.maxPartySize)
    throw ApiError.invalid(['minPartySize', 'maxPartySize'], 'minPartySize must not exceed maxPartySize.');
  if (rule.shiftId !== null) await assertShiftsOfVenue(tx, venueId, [rule.shiftId], 'shiftId');
  const sameScope = await tx
    .select()
    .from(turnTimeRules)
    .where(
      and(
        eq(turnTimeRules.venueId, venueId),
        rule.shiftId === null ? isNull(turnTimeRules.shiftId) : eq(turnTimeRules.shiftId, rule.shiftId),
        ruleId ? ne(turnTimeRules.id, ruleId) : undefined,
      ),
    );
  const clash = sameScope.find((o) => o.minPartySize <= rule.maxPartySize && rule.minPartySize <= o.maxPartySize);
  if (clash) {
    throw ApiError.invalid(
      ['minPartySize', 'maxPartySize'],
      `Party sizes ${clash.minPartySize}–${clash.maxPartySize} already have a turn time ${rule.shiftId ? 'for this shift' : 'venue-wide'}.`,
      { conflictingRuleId: clash.id },
    );
  }
}

export const turnTimeRuleKind: RuleKind<TurnTimeRuleRow, TurnTimeRuleFields> = {
  table: turnTimeRules,
  label: 'Turn-time rule',
  check: checkTurnTimeRule,
};
