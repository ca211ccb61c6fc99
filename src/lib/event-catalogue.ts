/** The reservation events of docs/webhooks.md, in catalogue order: the order in which one change emits several. */
export const reservationEventTypes = [
  'reservation_created',
  'reservation_confirmed',
  'reservation_modified',
  'reservation_cancelled',
  'guest_arrived',
  'guest_seated',
  'table_released',
  'meal_completed',
  'reservation_late',
  'reservation_no_show',
  'reservation_needs_attention',
] as const;

/**
 * Operator events: about the platform's handling of a webhook destination. Listed by GET /events and
 * streamed, never a trigger of automations: a disabled destination must not be sent news of itself.
 */
export const operatorEventTypes = ['webhook_endpoint_disabled', 'webhook_endpoint_enabled'] as const;

/** The whole event catalogue of docs/webhooks.md. */
export const eventTypes = [
  ...reservationEventTypes,
  'waitlist_entry_created',
  'waitlist_entry_cancelled',
  'compatible_table_freed',
  'guest_profile_changed',
  'webhook_test',
  ...operatorEventTypes,
] as const;

const notTriggers: readonly string[] = ['webhook_test', ...operatorEventTypes];

/** The types an automation may listen to: webhook_test is sent by POST /webhook-endpoints/test only, operator events by nobody. */
export const automationEventTypes = eventTypes.filter((t) => !notTriggers.includes(t)) as [EventType, ...EventType[]];

export function isAutomationTrigger(type: string): boolean {
  return (automationEventTypes as readonly string[]).includes(type);
}

/**
 * Types of history-only rows (never published): a reservation change that the catalogue has no
 * event for (its table, guest or externalRef), so that the reservation history still shows it.
 */
export const historyOnlyEventTypes = ['reservation_updated'] as const;
export type HistoryOnlyEventType = (typeof historyOnlyEventTypes)[number];

export type ReservationEventType = (typeof reservationEventTypes)[number];
export type EventType = (typeof eventTypes)[number];
export type OperatorEventType = (typeof operatorEventTypes)[number];
