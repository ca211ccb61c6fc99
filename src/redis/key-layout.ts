/**
 * Where a deployment's keys live (docs/operations.md "Running on several machines", key layout).
 * QUEUE_PREFIX names the deployment; its braces are dropped and each group of keys that a script or
 * a MULTI touches together gets a hash tag of its own inside that namespace: one per BullMQ queue,
 * one per destination's slots, one per fair queue's counts, one per rate-limited subject. A Redis
 * Cluster then spreads a deployment over its masters, while every multi-key command stays within
 * one slot. On one server or behind Sentinel the tags change nothing.
 */

/** The deployment's namespace: QUEUE_PREFIX without braces (`{floorline}` → `floorline`). */
export function namespaceOf(queuePrefix: string): string {
  return queuePrefix.replace(/[{}]/g, '');
}

/** A key in its own hash tag: `{<namespace>:<group…>}:<rest…>`. */
export function taggedKey(queuePrefix: string, group: readonly string[], ...rest: string[]): string {
  return [`{${[namespaceOf(queuePrefix), ...group].join(':')}}`, ...rest].join(':');
}

/** BullMQ's prefix for one queue: every key of the queue (`<prefix>:<queue>:…`) shares the queue's tag. */
export function bullPrefixOf(queuePrefix: string, queueName: string): string {
  return taggedKey(queuePrefix, [queueName]);
}

/** A SCAN pattern matching every key of the deployment (and of deployments whose QUEUE_PREFIX extends it, as tests' do). */
export function deploymentKeysPattern(queuePrefix: string): string {
  return `{${namespaceOf(queuePrefix).replace(/[*?[\]\\]/g, '\\$&')}*`;
}

/** The QUEUE_PREFIX a key belongs to (`{t1:events}:events:wait` → `{t1}`); null for a key outside this layout. */
export function queuePrefixOfKey(key: string): string | null {
  const match = /^\{([^:}]+)[:}]/.exec(key);
  return match ? `{${match[1]}}` : null;
}
