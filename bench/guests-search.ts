// GET /guests?search= and GET /guests/lookup over HTTP against 1,000,000 guests in one venue.
// Targets (issue 5): p50 < 20 ms, p99 < 60 ms for both.
// Usage: npx tsx bench/guests-search.ts [seconds per endpoint=10]
// Loading the guests takes a few minutes (one INSERT … SELECT generate_series, then the trigram index).
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
const guestCount = 1_000_000;
await prepareBenchDatabase('floorline_bench_guests');
const sql = (await import('../src/db/client.js')).pool();

const { organisationId, venueId, key } = await createBenchTenant();

const firstNames = [
  'José',
  'María',
  'Giulia',
  'Lorenzo',
  'Chloé',
  'Zoë',
  'Łukasz',
  'Søren',
  'Ana',
  'Marco',
  'Francesca',
  'Élodie',
  'Matteo',
  'Sofia',
  'Luca',
  'Andrea',
  'Noémie',
  'Jürgen',
  'Ines',
  'Paolo',
  'Martina',
  'Hélène',
  'Tomás',
  'Beatriz',
  'Nicolò',
  'Anaïs',
  'Federico',
  'Chiara',
  'Björn',
  'Raphaël',
  'Alessia',
  'Dario',
  'Núria',
  'Emma',
  'Gaël',
  'Irene',
  'Ömer',
  'Valentina',
  'Renée',
  'Stefano',
];
const domains = ['gmail.com', 'libero.it', 'orange.fr', 'example.com'];
const syllables = [
  'ro',
  'ma',
  'gar',
  'cí',
  'lo',
  'ber',
  'ti',
  'nel',
  'fon',
  'tá',
  'sca',
  'vel',
  'mü',
  'ller',
  'dub',
  'ois',
  'ric',
  'ci',
  'bian',
  'co',
  'es',
  'po',
  'si',
  'to',
  'mar',
  'tín',
  'ez',
  'gó',
  'mes',
  'lan',
  'di',
  'ni',
];

// Loading without the trigram index and building it afterwards is far faster than maintaining it row by row.
const [{ indexdef }] = await sql<{ indexdef: string }[]>`select indexdef from pg_indexes where indexname = 'guests_venue_search_idx'`;
await sql`drop index guests_venue_search_idx`;
let started = Date.now();
const batch = 200_000;
for (let from = 1; from <= guestCount; from += batch) {
  await sql`
    insert into guests (organisation_id, venue_id, phone, phone_national, first_name, last_name, email, created_at, updated_at)
    select ${organisationId}, ${venueId}, '+39347' || lpad(i::text, 7, '0'), '347' || lpad(i::text, 7, '0'), n.first, n.last,
      lower(immutable_unaccent(n.first || '.' || n.last)) || (i % 97) || '@' || (${domains}::text[])[1 + i % ${domains.length}],
      now() - make_interval(secs => ${guestCount} - i), now() - make_interval(secs => ${guestCount} - i)
    from generate_series(${from}::int, ${Math.min(from + batch - 1, guestCount)}::int) as i,
      lateral (select (${firstNames}::text[])[1 + i % ${firstNames.length}] as first,
        initcap(s[1 + (i / 7) % ${syllables.length}] || s[1 + (i / 11) % ${syllables.length}] || s[1 + (i / 13) % ${syllables.length}]) as last
        from (select ${syllables}::text[] as s) syl) n`;
  process.stdout.write(`\rloaded ${Math.min(from + batch - 1, guestCount)} guests`);
}
console.log(` in ${((Date.now() - started) / 1000).toFixed(0)} s`);
started = Date.now();
await sql.unsafe(indexdef);
await sql`analyze guests`;
console.log(`trigram index and statistics in ${((Date.now() - started) / 1000).toFixed(0)} s`);

const sample = await sql<{ first_name: string; last_name: string; email: string; phone: string }[]>`
  select first_name, last_name, email, phone from guests tablesample bernoulli (0.05) limit 500`;
await sql.end();

const env = benchServerEnv();
const server = await spawnServer('src/server.ts', env, 3911);

const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)];
const searches: Array<() => string> = [
  () => {
    const g = pick(sample);
    return `${g.first_name} ${g.last_name}`; // full name, with accents
  },
  () => pick(sample).last_name.slice(0, 5).normalize('NFD').replace(/\p{M}/gu, '').toLowerCase(), // a prefix, no accents
  () => pick(sample).phone.slice(6, 13), // 7 phone digits
  () => pick(sample).email.split('@')[0], // e-mail local part
  () => `${pick(firstNames)} ${pick(sample).last_name.slice(0, 4)}`,
];
const lookups: Array<() => string> = [
  () => pick(sample).phone,
  () => `0039 ${pick(sample).phone.slice(3)}`,
  () =>
    pick(sample)
      .phone.slice(3)
      .replace(/(\d{3})(\d{3})(\d+)/, '$1 $2 $3'), // national form
  () => `347 9${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`, // unknown number
];

async function measure(label: string, makePath: () => string): Promise<void> {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const path = makePath();
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:3911/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    latencies.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1);
  console.log(
    `${label.padEnd(22)} ${String(latencies.length).padStart(6)} requests   p50 ${at(0.5)} ms   p99 ${at(0.99)} ms   (target p50 < 20, p99 < 60)`,
  );
}

try {
  // Warm-up: JIT, connection pool, key cache, index pages.
  for (let i = 0; i < 200; i++) {
    await fetch(`http://127.0.0.1:3911/api/v1/guests?venueId=${venueId}&search=${encodeURIComponent(pick(searches)())}`, {
      headers: { authorization: `Bearer ${key}` },
    });
  }
  await measure('GET /guests?search=', () => `/guests?venueId=${venueId}&search=${encodeURIComponent(pick(searches)())}`);
  await measure('GET /guests/lookup', () => `/guests/lookup?venueId=${venueId}&phone=${encodeURIComponent(pick(lookups)())}`);
} finally {
  server.kill('SIGTERM');
}
