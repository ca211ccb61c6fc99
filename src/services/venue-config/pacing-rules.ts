import { z } from 'zod';
import type { Tx } from '../../db/client.js';
import { pacingRules } from '../../db/schema/index.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { assertShiftsOfVenue } from './shift-rules.js';
import type { RuleKind } from './venue-rules.js';

export type PacingRuleRow = typeof pacingRules.$inferSelect;

export interface PacingRuleFields {
  shiftId: string;
  isEnabled: boolean;
  maxCovers: number;
  windowMinutes: number;
}

export const pacingRuleSchema = component(
  'PacingRule',
  z.object({
    id: uuid,
    shiftId: uuid,
    isEnabled: z.boolean(),
    maxCovers: z.number().int(),
    windowMinutes: z.number().int(),
    updatedAt: instant,
  }),
  'Arrival pacing: at most maxCovers covers starting in each windowMinutes block of the shift (docs/api.md).',
);

/** docs/api.md Pacing rule, exactly. */
export function pacingRuleJson(r: PacingRuleRow): z.output<typeof pacingRuleSchema> {
  return {
    id: r.id,
    shiftId: r.shiftId,
    isEnabled: r.isEnabled,
    maxCovers: r.maxCovers,
    windowMinutes: r.windowMinutes,
    updatedAt: r.updatedAt.toISOString(),
  };
}

async function checkPacingRule(tx: Tx, venueId: string, rule: PacingRuleFields): Promise<void> {
  await assertShiftsOfVenue(tx, venueId, [rule.shiftId], 'shiftId');
}

export const pacingRuleKind: RuleKind<PacingRuleRow, PacingRuleFields> = {
  table: pacingRules,
  label: 'Pacing rule',
  check: checkPacingRule,
};
