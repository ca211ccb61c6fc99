// The background paths of worker-timers and the invariant check, each run as its timer runs it, on
// the database of DATABASE_URL; prints {name: median ms} as JSON. Spawned by bench/scale.ts once
// per database, so that the service modules load with that database's URL. With them, the live
// stream's reads (a page after a position, one run of the sequencer), which every commit and every
// resuming client cause.
const runs = Number(process.argv[2] ?? 7);
const { useFileSettings } = await import('../../test/support/file-settings.js');
const config = useFileSettings({});
const { db: openDb, pool } = await import('../../src/db/client.js');
const db = openDb();
const sql = pool();
const { notifyLateReservations, markNoShows, selectDueLate, selectDueNoShows } =
  await import('../../src/services/timers/late-reservations.js');
const { purgeConcludedDeliveries } = await import('../../src/services/timers/purge-deliveries.js');
const { purgeExpiredIdempotencyKeys } = await import('../../src/services/idempotency/idempotency-store.js');
const { purgeTrashedGuests } = await import('../../src/services/guests/guest-service.js');
const { purgeExpiredHolds } = await import('../../src/services/holds/hold-service.js');
const { sweepOutbox } = await import('../../src/services/outbox/sweep-outbox.js');
const { sweepDeliveries } = await import('../../src/services/webhooks/sweep-deliveries.js');
const { findUnsequencedOrganisations, sequenceEvents } = await import('../../src/services/outbox/event-sequencer.js');
const { selectEventsAfter } = await import('../../src/services/events/event-stream.js');
const { checkInvariants } = await import('../../src/services/invariants/check-invariants.js');
const { closeQueues } = await import('../../src/queues/queues.js');

// The organisation with the most numbered events: the seeded group.
const [{ organisationId, head }] = await sql<{ organisationId: string; head: number }[]>`
  select organisation_id as "organisationId", position::int as head from event_stream_heads order by position desc limit 1`;

const tasks: Record<string, () => Promise<unknown>> = {
  'timer: late scan (statement)': () => selectDueLate(db),
  'timer: no-show scan (statement)': () => selectDueNoShows(db),
  'timer: late run': () => notifyLateReservations(),
  'timer: no-show run': () => markNoShows(),
  'purge: concluded deliveries': () => purgeConcludedDeliveries(),
  'purge: idempotency keys': () => purgeExpiredIdempotencyKeys(),
  'purge: trashed guests': () => purgeTrashedGuests(),
  'purge: lapsed holds': () => purgeExpiredHolds(),
  'sweep: outbox': () => sweepOutbox(),
  'sweep: deliveries': () => sweepDeliveries(config),
  'sweep: unnumbered events': () => findUnsequencedOrganisations(0),
  'stream: a page from the first event': () => selectEventsAfter(organisationId, 0),
  'stream: a page 1,000 events back': () => selectEventsAfter(organisationId, head - 1000),
  'stream: a sequencer run (nothing new)': () => sequenceEvents(organisationId),
  'cli check': () => checkInvariants({ queuePrefixes: [config.QUEUE_PREFIX] }),
};

const medians: Record<string, number> = {};
for (const [name, task] of Object.entries(tasks)) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await task();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  medians[name] = times[Math.floor(times.length / 2)];
}
await closeQueues();
await sql.end();
console.log(JSON.stringify(medians));
process.exit(0);
