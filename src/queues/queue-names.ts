/** Every BullMQ queue of the platform; each is consumed by exactly one worker role. */
export const queueNames = {
  events: 'events',
  webhookDelivery: 'webhook-delivery',
  imports: 'imports',
  timers: 'timers',
} as const;

export type QueueName = (typeof queueNames)[keyof typeof queueNames];
export const allQueueNames: QueueName[] = Object.values(queueNames);
