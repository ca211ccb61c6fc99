// Where a booking's webhook waited (bench/fair-queues.ts): the stages between the booking and the
// webhook's arrival, from the queues' event streams (when a job first started, how often it was
// postponed) and the rows (when the event and the delivery were written, when the attempt began).
// The app's modules are imported when used: prepareBenchDatabase must have set their environment first.
import { QueueEvents } from 'bullmq';

interface JobWatch {
  /** When each job first became active (ms). */
  started: Map<string, number>;
  /** How often each job was moved to the delayed set. */
  delayed: Map<string, number>;
}

/** Listens to the events and deliveries queues from now on. */
export async function watchJobStarts(): Promise<{ events: JobWatch; deliveries: JobWatch; close: () => Promise<void> }> {
  const { createQueueConnection, queuePrefix } = await import('../../src/redis.js');
  const { eventJob } = await import('../../src/jobs/event-job.js');
  const { webhookDeliveryJob } = await import('../../src/jobs/webhook-delivery-job.js');
  const watch = async (name: string) => {
    const queueEvents = new QueueEvents(name, { connection: createQueueConnection(), prefix: queuePrefix(name) });
    const jobs: JobWatch = { started: new Map(), delayed: new Map() };
    queueEvents.on('active', ({ jobId }) => {
      if (!jobs.started.has(jobId)) jobs.started.set(jobId, Date.now());
    });
    queueEvents.on('delayed', ({ jobId }) => jobs.delayed.set(jobId, (jobs.delayed.get(jobId) ?? 0) + 1));
    await queueEvents.waitUntilReady();
    return { jobs, queueEvents };
  };
  const [events, deliveries] = await Promise.all([watch(eventJob.queueName), watch(webhookDeliveryJob.queueName)]);
  return {
    events: events.jobs,
    deliveries: deliveries.jobs,
    close: async () => {
      await Promise.all([events.queueEvents.close(), deliveries.queueEvents.close()]);
    },
  };
}

export interface Booking {
  id: string;
  at: number;
  /** When the booking's request was answered. */
  answeredAt: number;
  arrivedAt?: number;
}

const stageNames = [
  'booked → event row',
  'event row → event job started',
  'event job started → delivery row',
  'delivery row → delivery job started',
  'delivery job started → attempt',
  'attempt → received',
] as const;

/** Per stage, the p50 and p99 over the bookings (ms; a missing time skips that booking's stage), and the three slowest bookings in full. */
export async function describeStages(bookings: Booking[], watched: Awaited<ReturnType<typeof watchJobStarts>>): Promise<string[]> {
  const sql = (await import('../../src/db/client.js')).pool();
  const rows = await sql<
    Array<{
      reservation_id: string;
      event_id: string;
      event_at: Date | string;
      delivery_id: string | null;
      delivery_at: Date | string | null;
      attempt_at: Date | string | null;
    }>
  >`
    select e.subject_id as reservation_id, e.id as event_id, e.created_at as event_at, d.id as delivery_id, d.created_at as delivery_at, a.started_at as attempt_at
    from events e
    left join webhook_deliveries d on d.event_id = e.id
    left join webhook_delivery_attempts a on a.delivery_id = d.id and a.attempt = 1
    where e.type = 'reservation_created' and e.subject_id = any(${bookings.map((b) => b.id)}::uuid[])`;
  const ms = (at: Date | string | null | undefined) => (at == null ? undefined : new Date(at).getTime());
  const byReservation = new Map(rows.map((r) => [r.reservation_id, r]));
  const timelines = bookings.map((b) => {
    const r = byReservation.get(b.id);
    const times = [
      b.at,
      ms(r?.event_at),
      r && watched.events.started.get(r.event_id),
      ms(r?.delivery_at),
      r?.delivery_id ? watched.deliveries.started.get(r.delivery_id) : undefined,
      ms(r?.attempt_at),
      b.arrivedAt,
    ];
    const postponed = r?.delivery_id ? (watched.deliveries.delayed.get(r.delivery_id) ?? 0) : 0;
    return { total: (b.arrivedAt ?? Number.POSITIVE_INFINITY) - b.at, times, postponed };
  });
  const percentile = (list: number[], p: number) =>
    [...list].sort((x, y) => x - y)[Math.min(list.length - 1, Math.ceil((p / 100) * list.length) - 1)];
  const lines = stageNames.map((name, i) => {
    const spans = timelines.flatMap(({ times }) =>
      times[i] !== undefined && times[i + 1] !== undefined ? [times[i + 1]! - times[i]!] : [],
    );
    return spans.length
      ? `  ${name}: p50 ${percentile(spans, 50)} ms, p99 ${percentile(spans, 99)} ms (${spans.length})`
      : `  ${name}: not seen`;
  });
  const slowest = [...timelines].sort((x, y) => y.total - x.total).slice(0, 3);
  for (const { total, times, postponed } of slowest) {
    const spans = stageNames.map((_, i) =>
      times[i] !== undefined && times[i + 1] !== undefined ? String(times[i + 1]! - times[i]!) : '?',
    );
    lines.push(`  slow booking, ${total} ms: ${spans.join(' + ')} ms; delivery job postponed ${postponed}×`);
  }
  return lines;
}
