// `npm run build`: compiles src/ and workers/ to dist/ (tsc -p tsconfig.build.json) from a clean dist/, with the Redis scripts beside.
// `--if-stale` (npm start): builds only when a source or tsconfig file is newer than the last build, so that
// `npm start` right after `npm install` or after an edit runs current code, and otherwise starts at once.
// Plain JavaScript on purpose: it runs before anything is compiled, without tsx.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const inputs = ['src', 'workers', 'clients/typescript/src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((p) => path.join(root, p));

function newestMtime(p) {
  const stat = statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its directory's mtime
  for (const entry of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

function isStale() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return inputs.some((p) => newestMtime(p) > built);
}

if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);

let tsc;
try {
  // TypeScript 7, installed as `@typescript/native`: the name `typescript` is the 6.0 compiler API that typescript-eslint
  // needs (eslint.config.js).
  tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin', 'tsc');
} catch {
  if (existsSync(stamp)) process.exit(0); // a production install (--omit=dev) runs the dist/ it was shipped with
  console.error('dist/ is missing and TypeScript is not installed: run `npm install` (with dev dependencies), then `npm run build`.');
  process.exit(1);
}
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
// tsc reports on stdout; send it to stderr so that nothing but the program's own output reaches stdout.
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: ['ignore', 2, 2] });
if (result.status !== 0) {
  console.error('build failed (tsc -p tsconfig.build.json)');
  process.exit(result.status ?? 1);
}
// tsc emits JavaScript only: the Redis scripts (src/redis/scripts/*.lua) are read at run time next to the compiled loader.
cpSync(path.join(root, 'src', 'redis', 'scripts'), path.join(root, 'dist', 'src', 'redis', 'scripts'), { recursive: true, filter: (p) => !p.endsWith('.ts') });
writeFileSync(stamp, `${new Date().toISOString()}\n`);
