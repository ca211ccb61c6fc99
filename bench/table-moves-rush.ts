// Bookings of one venue-day under a rush, with and without table moves needed, on two versions of the
// code side by side in one run (docs/reservations.md "Table optimisation"): the version checked out
// here ("after") and an earlier commit ("before", extracted with git archive and served from a
// temporary directory against the same database).
// Usage: npx tsx bench/table-moves-rush.ts <before-commit> [requests=120] [rounds=2]
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { benchServerEnv, prepareBenchDatabase } from './support/bench-database.js';
import { extractCommit } from './support/earlier-commit.js';
import { spawnServer } from './support/spawn-server.js';

const beforeRev = process.argv[2];
if (!beforeRev) throw new Error('usage: npx tsx bench/table-moves-rush.ts <before-commit> [requests=120] [rounds=2]');
const requestCount = Number(process.argv[3] ?? 120);
const rounds = Number(process.argv[4] ?? 2);
const CONCURRENCY = 32;
/**
 * Two-tops and four-tops of the floor (room for every request of the rush), and the rush times: each
 * is an hour after an earlier sitting, and 90-minute turns keep them apart.
 */
const TABLES_PER_SIZE = Math.ceil(requestCount / 5) + 6;
const sittings = [
  { early: '11:00', rush: '12:00' },
  { early: '13:30', rush: '14:30' },
  { early: '16:00', rush: '17:00' },
  { early: '18:30', rush: '19:30' },
  { early: '21:00', rush: '22:00' },
];

const before = extractCommit(beforeRev);

await prepareBenchDatabase('floorline_bench_table_moves_rush');
const { createApiKey, createOrganisation } = await import('../src/services/keys/key-service.js');
const { createVenue } = await import('../src/services/venues/venue-service.js');
const { createRule } = await import('../src/services/venue-config/venue-rules.js');
const { shiftKind } = await import('../src/services/venue-config/shift-rules.js');
const { turnTimeRuleKind } = await import('../src/services/venue-config/turn-time-rules.js');
const { createFloorPlan } = await import('../src/services/floor/floor-plan-writes.js');
const { systemActor } = await import('../src/services/outbox/outbox.js');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();
const { randomUUID } = await import('node:crypto');

/** A venue without pacing rules (their lock would serialise every booking of the day anyway): one all-day shift, 90-minute turns, two-tops and four-tops. */
const org = await createOrganisation('Bench', false);
const venue = await createVenue(org.id, { name: 'Rush', timezone: 'Europe/Rome', countryCode: 'IT' });
const access = { organisationId: org.id, venueIds: null };
await createRule(shiftKind, access, venue.id, {
  name: 'All day',
  daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
  startTime: '11:00',
  lastSeatingTime: '22:00',
  endTime: '23:59',
  validFrom: null,
  validTo: null,
  isActive: true,
});
await createRule(turnTimeRuleKind, access, venue.id, { shiftId: null, minPartySize: 1, maxPartySize: 8, durationMinutes: 90 });
const area = { id: randomUUID(), name: 'Room', icon: 'room', position: 0, widthCm: 3000, heightCm: 3000 };
const tables = [2, 4].flatMap((maxSeats) =>
  Array.from({ length: TABLES_PER_SIZE }, (_, i) => ({
    id: randomUUID(),
    areaId: area.id,
    name: `${maxSeats === 2 ? 'A' : 'F'}${String(i + 1).padStart(2, '0')}`,
    minSeats: maxSeats === 2 ? 1 : 2,
    maxSeats,
    positionXCm: 100 + (i % 10) * 200,
    positionYCm: 100 + Math.floor(i / 10) * 180 + (maxSeats === 4 ? 1400 : 0),
    widthCm: 80,
    heightCm: 80,
  })),
);
await createFloorPlan(access, systemActor('bench'), venue.id, { name: 'Rush floor', areas: [area], tables, combinations: [] });
const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 });

const servers: ChildProcess[] = [];
const ports = { before: 3961, after: 3962 };
const today = instantToLocal('Europe/Rome', Date.now()).date;
let nextDay = 2;

interface Answer {
  status: number;
  reason?: string;
  id?: string;
}

/** `count` requests, `concurrency` at a time. */
async function inParallel(
  count: number,
  concurrency: number,
  send: (i: number) => Promise<Answer>,
): Promise<{ answers: Answer[]; seconds: number }> {
  const answers: Answer[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) answers.push(await send(next++));
    }),
  );
  return { answers, seconds: (performance.now() - started) / 1000 };
}

async function call(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { reservation?: { id: string }; error?: { details?: { reason?: string } } };
  return { status: res.status, reason: json.error?.details?.reason, id: json.reservation?.id };
}

const book = (port: number, serviceDate: string, time: string, partySize: number) =>
  call(port, 'POST', '/reservations', { venueId: venue.id, serviceDate, time, partySize });

/**
 * A fresh day where every party of 4 at a rush time needs a move: couples of an earlier sitting take the two-tops,
 * couples at the rush time then sit on the four-tops, and the earlier couples cancel.
 */
async function dayNeedingMoves(port: number): Promise<string> {
  const serviceDate = addDays(today, nextDay++);
  const couples = async (sitting: 'early' | 'rush') => {
    const { answers } = await inParallel(sittings.length * TABLES_PER_SIZE, 8, (i) =>
      book(port, serviceDate, sittings[i % sittings.length][sitting], 2),
    );
    if (answers.some((a) => a.status !== 201)) throw new Error(`setup: ${sitting} couples not all seated`);
    return answers.map((a) => a.id!);
  };
  const early = await couples('early');
  await couples('rush');
  await inParallel(early.length, 8, (i) => call(port, 'DELETE', `/reservations/${early[i]}`));
  return serviceDate;
}

async function movesOf(serviceDate: string): Promise<number> {
  const [{ moves }] = await sql<{ moves: number }[]>`
    select count(*)::int as moves from events e join reservations r on r.id = e.subject_id
    where r.venue_id = ${venue.id} and r.service_date = ${serviceDate} and e.actor->>'name' = 'table-optimiser'`;
  return moves;
}

/** The rush: parties of 4 at the rush times, CONCURRENCY at a time. */
async function rush(version: 'before' | 'after', movesNeeded: boolean) {
  const port = ports[version];
  const serviceDate = movesNeeded ? await dayNeedingMoves(port) : addDays(today, nextDay++);
  const { answers, seconds } = await inParallel(requestCount, CONCURRENCY, (i) =>
    book(port, serviceDate, sittings[i % sittings.length].rush, 4),
  );
  const seated = answers.filter((a) => a.status === 201).length;
  const refusals = new Map<string, number>();
  for (const a of answers)
    if (a.status !== 201) refusals.set(a.reason ?? String(a.status), (refusals.get(a.reason ?? String(a.status)) ?? 0) + 1);
  return { seated, seconds, refusals, moves: await movesOf(serviceDate) };
}

try {
  servers.push(await spawnServer(resolve(before.dir, 'src/server.ts'), benchServerEnv(), ports.before));
  servers.push(await spawnServer('src/server.ts', benchServerEnv(), ports.after));
  console.log(
    `${requestCount} bookings of 4 at once on one venue-day (${CONCURRENCY} at a time, ${TABLES_PER_SIZE} two-tops and ${TABLES_PER_SIZE} four-tops, 5 sittings), before = ${beforeRev}, after = this tree; ${rounds} rounds, interleaved`,
  );
  console.log('round  version  moves needed  seated  bookings/s  moves  refusals');
  for (let round = 1; round <= rounds; round++) {
    for (const movesNeeded of [false, true]) {
      for (const version of ['before', 'after'] as const) {
        const r = await rush(version, movesNeeded);
        const refusals = [...r.refusals].map(([reason, n]) => `${reason}×${n}`).join(' ') || 'none';
        console.log(
          `${String(round).padEnd(7)}${version.padEnd(9)}${(movesNeeded ? 'yes' : 'no').padEnd(14)}${String(r.seated).padEnd(8)}${(r.seated / r.seconds).toFixed(0).padEnd(12)}${String(r.moves).padEnd(7)}${refusals}`,
        );
      }
    }
  }
} finally {
  for (const server of servers) server.kill('SIGTERM');
  await sql.end();
  before.remove();
}
