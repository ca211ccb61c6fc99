// Loads a restaurant group's history into a database of its own (issue 24): see bench/support/scale-seed.ts.
// Usage: npm run bench:seed -- [--scale 1] [--history-days 730] [--database floorline_scale]
// Scale 1 is 200 venues: about 2,000,000 reservations, 1,000,000 guests, 5,000,000 events and
// 800,000 deliveries over two years. The database is dropped and created again.
import { parseArgs } from 'node:util';
import { prepareBenchDatabase } from './support/bench-database.js';
import { seedRecordOf, writeSeedRecord } from './support/scale-record.js';
import { seedScaleHistory } from './support/scale-seed.js';

const { values } = parseArgs({
  options: { scale: { type: 'string', default: '1' }, 'history-days': { type: 'string', default: '730' }, database: { type: 'string' } },
});
const scale = Number(values.scale);
const historyDays = Number(values['history-days']);
if (!(scale > 0) || !Number.isInteger(historyDays) || historyDays < 1) {
  console.error('usage: npm run bench:seed -- [--scale N (> 0)] [--history-days D (integer >= 1)] [--database NAME]');
  process.exit(2);
}
const database = values.database ?? seedRecordOf(scale, historyDays);
const url = await prepareBenchDatabase(database);
const seed = await seedScaleHistory({ scale, historyDays, log: (line) => console.log(line) });
const sql = (await import('../src/db/client.js')).pool();
await sql.end();
const record = { databaseUrl: url, organisationId: seed.organisationId, key: seed.key, counts: seed.counts };
await writeSeedRecord(database, record);
console.log(JSON.stringify(record));
