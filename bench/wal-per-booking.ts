// WAL written per booking (issue 24) on a seeded history: bookings spread over the group's venues,
// each round after a CHECKPOINT (the first change of a page after a checkpoint writes the whole page
// to the WAL, which is what random ids make every insert do on a large index). With --code DIR the
// same rounds run, alternating, with the server of another checkout (the code before a change) on
// the same database.
// Usage: npx tsx bench/wal-per-booking.ts [--history-days 7] [--scale 1] [--bookings 400] [--rounds 2] [--code DIR]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { readSeedRecord, seedRecordOf } from './support/scale-record.js';
import { spawnServer } from './support/spawn-server.js';

const { values } = parseArgs({
  options: {
    'history-days': { type: 'string', default: '7' },
    scale: { type: 'string', default: '1' },
    bookings: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '2' },
    code: { type: 'string' },
  },
});
const historyDays = Number(values['history-days']);
const scale = Number(values.scale);
const bookings = Number(values.bookings);
const rounds = Number(values.rounds);
const database = seedRecordOf(scale, historyDays);

let record = await readSeedRecord(database);
if (!record) {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/seed.ts', '--scale', String(scale), '--history-days', String(historyDays), '--database', database],
      { stdio: 'inherit' },
    );
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seed exited with ${code}`))));
  });
  record = (await readSeedRecord(database))!;
}
const sql = postgres(record.databaseUrl, { max: 1, onnotice: () => {} });
const venues = (await sql<{ id: string }[]>`select id from venues where organisation_id = ${record.organisationId} order by id`).map(
  (v) => v.id,
);

const env = {
  DATABASE_URL: record.databaseUrl,
  QUEUE_PREFIX: `{${database}_wal}`,
  LOG_LEVEL: 'warn',
  ADMIN_PASSWORD: 'bench',
  METRICS_PORT: '0',
};
const codes = [
  { name: 'this checkout', dir: path.resolve('.') },
  ...(values.code ? [{ name: path.basename(values.code), dir: path.resolve(values.code) }] : []),
];
const localDate = (offsetDays: number) => {
  const d = new Date(`${new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome' }).format(new Date())}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + offsetDays);
  return d.toISOString().slice(0, 10);
};

const results = new Map<string, number[]>();
let sequence = 0;
try {
  for (let round = 0; round < rounds; round++) {
    for (const code of codes) {
      const port = 3990 + codes.indexOf(code);
      const server = await spawnServer(path.join(code.dir, 'src/server.ts'), env, port);
      try {
        await sql`checkpoint`;
        const [{ lsn: before }] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
        let booked = 0;
        for (let i = 0; i < bookings; i++, sequence++) {
          const body = {
            venueId: venues[sequence % venues.length],
            serviceDate: localDate(20 + (sequence % 40)),
            time: ['12:00', '12:30', '13:00', '19:30', '20:00', '20:30'][sequence % 6],
            partySize: 2,
          };
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/reservations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${record.key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          await res.text();
          if (res.status === 201) booked++;
        }
        const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${before}::pg_lsn)::text as bytes`;
        const perBooking = Number(bytes) / Math.max(1, booked);
        results.set(code.name, [...(results.get(code.name) ?? []), perBooking]);
        console.log(`round ${round + 1}, ${code.name}: ${booked} bookings, ${(perBooking / 1024).toFixed(1)} KB of WAL per booking`);
      } finally {
        server.kill('SIGTERM');
      }
    }
  }
} finally {
  await sql.end();
}
for (const [name, perBooking] of results) {
  const sorted = [...perBooking].sort((a, b) => a - b);
  console.log(
    `${name}: median ${(sorted[sorted.length >> 1] / 1024).toFixed(1)} KB of WAL per booking (${database}, ${historyDays} days of history)`,
  );
}
