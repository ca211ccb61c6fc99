/** The conditions of an automation (docs/webhooks.md); null means "any". */
export interface AutomationConditions {
  partySizeMin: number | null;
  partySizeMax: number | null;
  sources: string[] | null;
}

function subjectOf(data: Record<string, unknown>): { partySize?: unknown; source?: unknown } | null {
  const subject = data.reservation ?? data.waitlistEntry;
  return subject && typeof subject === 'object' ? (subject as { partySize?: unknown; source?: unknown }) : null;
}

/**
 * Whether an event's data satisfies the conditions. They are read from the reservation of the event
 * (the party size also from a waiting-list entry); an event without that field does not satisfy a
 * condition on it.
 */
export function conditionsMatch(conditions: AutomationConditions, data: Record<string, unknown>): boolean {
  const subject = subjectOf(data);
  if (conditions.partySizeMin !== null || conditions.partySizeMax !== null) {
    const size = subject?.partySize;
    if (typeof size !== 'number') return false;
    if (conditions.partySizeMin !== null && size < conditions.partySizeMin) return false;
    if (conditions.partySizeMax !== null && size > conditions.partySizeMax) return false;
  }
  if (conditions.sources !== null) {
    const source = subject?.source;
    if (typeof source !== 'string' || !conditions.sources.includes(source)) return false;
  }
  return true;
}
