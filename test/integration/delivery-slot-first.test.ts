import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { createDatabase, databaseOptionsOf, useDatabase } from '../../src/db/client.js';
import type { WebhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { connectRedis } from '../../src/redis.js';
import { taggedKey } from '../../src/redis/key-layout.js';
import { attemptDelivery, prepareDelivery, type DeliveryJobControl } from '../../src/services/webhooks/deliver-webhook-job.js';
import type { DeliveryContext } from '../../src/services/webhooks/delivery-state.js';
import { DestinationSlots } from '../../src/services/webhooks/destination-slots.js';
import { SigningSecretBox } from '../../src/services/webhooks/signing-secrets.js';

// A delivery job that knows its destination takes a slot of it before it reads its row, and gives
// the slot back on every way out (docs/architecture.md "Isolation per destination"): against the
// real Redis and PostgreSQL, the statements the run sends counted. Each DestinationSlots stands for
// one worker-webhooks process; a destination of its own per test.
const config = processConfig();
const sent: string[] = [];
// The driver's own read of the server's types, on a first connection, is not the run's.
const database = createDatabase({
  ...databaseOptionsOf(config),
  onStatement: (text) => void (text.includes('pg_catalog.pg_type') || sent.push(text)),
});
/** A statement by what it reads: the delivery's context is the one that joins its event, automation and endpoint. */
const nameOf = (text: string) =>
  /from "?webhook_deliveries"?.*join "?automations"?/s.test(text) ? 'read_webhook_delivery_context' : text.slice(0, 60);
useDatabase(database);

const prefix = `${config.QUEUE_PREFIX}slot-first`;
const instances: DestinationSlots[] = [];
const redis = connectRedis('slots');
let destinations = 0;
const newDestination = () => `https://partner-${++destinations}.example`;
const members = (destination: string) => redis.zrange(taggedKey(prefix, ['destination', destination], 'slots'), '0', '-1');
const secrets = new SigningSecretBox(config.secretsKey);
const targets = { WEBHOOKS_ALLOW_PRIVATE_TARGETS: true } as Parameters<typeof attemptDelivery>[3];

function slotsOf(): DestinationSlots {
  const slots = new DestinationSlots({ redis: connectRedis('slots'), prefix, limit: 1, workerConcurrency: 10, wake: async () => false });
  instances.push(slots);
  return slots;
}

/** The steps' view of a job, its moves and data writes recorded: a delivery that does not exist, expected at `destination`. */
function jobFor(destination: string): DeliveryJobControl & { delayedUntil: number[]; dataWrites: WebhookDeliveryJob[] } {
  const delayedUntil: number[] = [];
  const dataWrites: WebhookDeliveryJob[] = [];
  const job = {
    id: randomUUID(),
    data: { deliveryId: randomUUID(), destination } as WebhookDeliveryJob,
    runsWithoutAttempt: 0,
    updateData: async (data: WebhookDeliveryJob) => void dataWrites.push((job.data = data)),
    moveBehindTheLine: async () => {},
    moveToDelayed: async (at: number) => void delayedUntil.push(at),
    log: async () => 0,
    delayedUntil,
    dataWrites,
  };
  return job;
}

afterAll(async () => {
  await Promise.all(instances.map((s) => s.close()));
  await redis.quit();
  await database.sql.end();
});

describe('a delivery job takes its expected destination’s slot before reading its row', () => {
  it('postponed without a statement sent, nor its data written, while another process holds the slots', async () => {
    const destination = newDestination();
    const other = await slotsOf().acquire(destination);
    expect(other).not.toBeNull();
    const job = jobFor(destination);
    sent.length = 0;
    expect(await prepareDelivery(slotsOf(), job, secrets)).toEqual({ kind: 'postponed' });
    expect(sent.map(nameOf)).toEqual([]);
    expect(job.delayedUntil).toHaveLength(1);
    // It names its destination already: nothing to remember.
    expect(job.dataWrites).toEqual([]);
  });

  it('postponed for another destination than it expected (the row resolves another): its data names that one from then on', async () => {
    const expected = newDestination();
    const resolved = newDestination();
    const slots = slotsOf();
    expect(await slotsOf().acquire(resolved)).not.toBeNull();
    const job = jobFor(expected);
    const slot = await slots.acquire(expected);
    const destination = { endpointId: null, url: `${resolved}/hooks`, secrets: [], scheme: 'service-v1' as const };
    const context = { delivery: { payload: '{}' } } as DeliveryContext;
    expect(await attemptDelivery(slots, job, { context, destination, slot }, targets)).toEqual({ kind: 'postponed' });
    expect(job.dataWrites).toEqual([{ ...job.data, destination: resolved }]);
    expect(job.delayedUntil).toHaveLength(1);
    expect(await members(expected)).toEqual([]);
  });

  it('reads the row once it holds the slot, and gives the slot back when there is nothing to send', async () => {
    const destination = newDestination();
    const job = jobFor(destination);
    sent.length = 0;
    expect(await prepareDelivery(slotsOf(), job, secrets)).toEqual({ kind: 'discarded', message: null });
    expect(sent.map(nameOf)).toEqual(['read_webhook_delivery_context']); // which finds no row
    expect(await members(destination)).toEqual([]);
  });

  it('gives back the expected destination’s slot when the row resolves another one, or none usable', async () => {
    const slots = slotsOf();
    const expected = newDestination();
    const job = jobFor(expected);
    for (const url of [newDestination(), null]) {
      const slot = await slots.acquire(expected);
      expect(await members(expected)).toHaveLength(1);
      const destination =
        url === null
          ? { endpointId: null, url, error: 'the venue has no webhook endpoint' }
          : { endpointId: null, url, secrets: [], scheme: 'service-v1' as const };
      const context = { delivery: { payload: '{}' } } as DeliveryContext;
      // The claim finds no row: nothing is sent, and every slot taken is given back.
      expect(await attemptDelivery(slots, job, { context, destination, slot }, targets)).toEqual({ kind: 'discarded', message: null });
      expect(await members(expected)).toEqual([]);
      if (url) expect(await members(url)).toEqual([]);
    }
  });
});
