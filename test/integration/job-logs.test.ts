import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';

import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { client, createTenant } from '../support/harness.js';
import { collectLogLines } from '../support/log-lines.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { compiledEntry } from '../support/entry-process.js';

// Its own queues: no other file's worker may take (and log) these jobs.
useOwnQueuePrefix('joblogs');

// A partner that always fails, and worker-webhooks in its own process logging at info.
const pipeline = useWebhookPipeline({ policy: () => 500, webhooksRole: false });
let worker: ChildProcess | undefined;

afterAll(() => {
  worker?.kill('SIGKILL');
});

describe('worker logs', () => {
  it('a failed job is logged with its queue and its job id (the delivery id)', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Failing partner',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    worker = spawn(process.execPath, [compiledEntry('workers/webhooks.ts')], {
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = collectLogLines(worker.stdout!);

    const { eventId } = await emitReservationEvent(tenant);
    const delivery = await waitForDelivery(eventId, (d) => d.attempts === 1 && d.lastResponseStatus === 500, 30_000);
    const failed = await eventually(async () => lines.find((l) => l.msg === 'job failed'), 10_000, 'the job failed line');
    expect(failed).toMatchObject({ queue: webhookDeliveryJob.queueName, jobId: delivery.id, attemptsMade: 1 });
    // Every line of the worker that names a job also names its queue.
    for (const line of lines.filter((l) => 'jobId' in l)) expect(line.queue, JSON.stringify(line)).toBe(webhookDeliveryJob.queueName);
  }, 60_000);
});
