// What a statement costs the process in the driver (postgres.js) itself, and how much of it is V8's
// optimising compiler starting again and again on the driver's classes: transactions of three
// statements (the driver's `sql.begin`, 8 at once, as a busy web process runs them) in a child
// process, once with V8's `--trace-opt` to count the optimisations it aborted per function, once
// without to measure the CPU per transaction (the compiler's thread included). Then the pattern
// alone, without the driver: a class extending Array with a static `Symbol.species` getter (the
// driver's `Result`; its `Query` extends Promise the same way), constructed in a loop, against the
// same class with `Symbol.species` as a data property. docs/architecture.md "Public seams only".
// `--driver DIR`: the driver's part is run with the copy of postgres.js in DIR as well (one with its
// two getters made data properties, say), in the same run, to measure what a fix would save.
// Usage: npx tsx bench/driver-recompiles.ts [transactions=8000] [--driver DIR]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const child = process.argv[2] === '--child';
const transactions = Number((child ? process.argv[3] : process.argv.find((a, i) => i >= 2 && /^\d+$/.test(a))) ?? 8000);
const driverAt = process.argv.indexOf('--driver');
/** The other copy of the driver to measure (--driver DIR), or, in the child, the one to load ('' for the project's). */
const otherDriver = child ? process.argv[4] : driverAt > 0 ? path.resolve(process.argv[driverAt + 1]) : '';

/**
 * The driver's `Result` (src/result.js of postgres 3.4.9) as it is, and with its species a data
 * property, made in a loop (argv: getter | data, how many); prints the CPU per construction in ns,
 * the compiler's thread included.
 */
const resultPattern = `
const [species, count] = process.argv.slice(1);
const fields = () => ({ count: { value: null, writable: true }, state: { value: null, writable: true },
  command: { value: null, writable: true }, columns: { value: null, writable: true }, statement: { value: null, writable: true } });
class WithGetter extends Array {
  constructor() { super(); Object.defineProperties(this, fields()); }
  static get [Symbol.species]() { return Array; }
}
class WithData extends Array {
  constructor() { super(); Object.defineProperties(this, fields()); }
}
Object.defineProperty(WithData, Symbol.species, { value: Array });
const Result = species === 'getter' ? WithGetter : WithData;
const make = (i) => { const result = new Result(); if (i % 3 === 0) result.push({ row: i }); return result; };
let kept = [];
const before = process.cpuUsage();
for (let i = 0; i < Number(count); i++) { kept.push(make(i)); if (kept.length > 100) kept = []; }
const used = process.cpuUsage(before);
console.log('cpu-per-construction ' + (((used.user + used.system) * 1000) / Number(count)).toFixed(0));
`;

if (child) {
  const postgres = (
    (otherDriver ? await import(pathToFileURL(path.join(otherDriver, 'src/index.js')).href) : await import('postgres')) as {
      default: typeof import('postgres');
    }
  ).default;
  const sql = postgres(process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', {
    max: 4,
    onnotice: () => {},
  });
  const one = () =>
    sql.begin(async (tx) => {
      await tx.unsafe('select 1 as a', [], { prepare: true });
      await tx.unsafe('select 2 as b', [], { prepare: true });
      await tx.unsafe('select 3 as c', [], { prepare: true });
    });
  const run = () =>
    Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < transactions / 8; i++) await one();
      }),
    );
  await run(); // warm-up, not measured
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  console.log(`cpu-per-transaction ${((used.user + used.system) / transactions).toFixed(1)}`);
  await sql.end();
} else {
  /** Runs `args` in a child process of Node: its output, and the optimisations V8 aborted there, per function. */
  const spawnChild = (args: string[], traced: boolean) => {
    const run = spawnSync(process.execPath, [...(traced ? ['--trace-opt'] : []), ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (run.status !== 0) throw new Error(`${args.join(' ')}: ${run.stderr}`);
    const aborted = new Map<string, number>();
    for (const [, name] of run.stdout.matchAll(/\[aborted optimizing \S+ <JSFunction (\S*)/g))
      aborted.set(name, (aborted.get(name) ?? 0) + 1);
    const figure = /cpu-per-\S+ ([\d.]+)/.exec(run.stdout)?.[1];
    return { figure, aborted: [...aborted].sort((a, b) => b[1] - a[1]) };
  };
  const list = (aborted: Array<[string, number]>) => aborted.map(([name, n]) => `${name || '(anonymous)'} ${n}`).join(', ') || 'none';
  for (const driver of otherDriver ? ['', otherDriver] : ['']) {
    const args = ['--import', 'tsx', self, '--child', String(transactions), driver];
    const traced = spawnChild(args, true);
    const measured = spawnChild(args, false);
    console.log(
      `driver${driver ? ` in ${driver}` : ''}: ${transactions} transactions (BEGIN, 3 prepared statements one after another, COMMIT), 8 at once, after as many: ${measured.figure} µs of CPU each`,
    );
    console.log(`  optimisations V8 aborted (--trace-opt, a run of its own): ${list(traced.aborted)}`);
  }
  const constructions = transactions * 400;
  for (const species of ['getter', 'data'] as const) {
    // Plain JavaScript, as the driver is (tsx would compile the classes with helpers of its own).
    const pattern = ['--input-type=module', '-e', resultPattern, species, String(constructions)];
    const traced = spawnChild(pattern, true);
    const alone = spawnChild(pattern, false);
    console.log(
      `the driver's Result alone, Symbol.species as ${species === 'getter' ? 'a static getter (as the driver has it)' : 'a data property'}, constructed ${constructions} times: ${alone.figure} ns of CPU each; aborted optimisations: ${list(traced.aborted)}`,
    );
  }
}
