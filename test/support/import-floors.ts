import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ImportGraph } from './import-graph.js';

/**
 * The repository drawn floor by floor, lowest first: a module may import its own floor and the floors
 * below it. Each floor lists path prefixes (a folder ends with `/`); a module belongs to the floor of
 * its longest matching prefix. CONTRIBUTING.md "Layers" and docs/architecture.md "Layers" draw the same.
 */
export const repositoryFloors: readonly (readonly string[])[] = [
  // The partners' package: what the server shares with it (webhook verification) is imported from it.
  ['clients/typescript/'],
  ['src/lib/'],
  ['src/core/'],
  ['src/tracing/', 'src/redis/', 'src/project-root.ts', 'src/version.ts'],
  ['src/config.ts', 'src/logger.ts'],
  // The counters and histograms the code observes into; read at scrape time by src/monitoring/.
  ['src/metrics/'],
  ['src/redis.ts'],
  ['src/db/'],
  ['src/queues/'],
  // Job kinds' definitions: services enqueue them; their handlers sit with the roles that run them.
  ['src/jobs/'],
  ['src/services/'],
  // What the metrics port answers: the scrape-time gauges, /metrics, /healthz and /readyz.
  ['src/monitoring/'],
  ['src/http/', 'src/routes/'],
  ['src/preflight.ts', 'src/set-up-process.ts', 'src/roles/'],
  ['src/main.ts', 'src/server.ts', 'src/emit-openapi.ts', 'src/cli/', 'workers/'],
  ['scripts/', 'bench/', 'test/'],
];

/** The floor of `module` (index into `floors`), or undefined when no floor names it. */
export function floorOf(module: string, floors: readonly (readonly string[])[]): number | undefined {
  let found: { floor: number; length: number } | undefined;
  floors.forEach((prefixes, floor) => {
    for (const prefix of prefixes)
      if ((module === prefix || (prefix.endsWith('/') && module.startsWith(prefix))) && prefix.length > (found?.length ?? -1))
        found = { floor, length: prefix.length };
  });
  return found?.floor;
}

/** The prefix that names `module`'s box in the picture (its folder, or the file itself). */
function boxOf(module: string, floors: readonly (readonly string[])[]): string {
  const prefixes = floors.flat().filter((p) => module === p || (p.endsWith('/') && module.startsWith(p)));
  return prefixes.sort((a, b) => b.length - a.length)[0] ?? module;
}

/**
 * The arrows of the picture that run back up: `<box> -> <box>` for each pair of boxes where a module of
 * the first imports one of the second on a higher floor, with the imports behind it.
 */
export function findUpwardArrows(graph: ImportGraph, floors: readonly (readonly string[])[]): Map<string, string[]> {
  const arrows = new Map<string, string[]>();
  for (const [from, targets] of graph) {
    const fromFloor = floorOf(from, floors);
    for (const target of targets) {
      const toFloor = floorOf(target, floors);
      if (fromFloor === undefined || toFloor === undefined || toFloor <= fromFloor) continue;
      const arrow = `${boxOf(from, floors)} -> ${boxOf(target, floors)}`;
      arrows.set(arrow, [...(arrows.get(arrow) ?? []), `${from} imports ${target}`]);
    }
  }
  return new Map([...arrows].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Every TypeScript module under `dirs` (repository-relative) and the modules it imports (relative
 * files as repository paths, else package names), type-only imports included.
 */
export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const dir of dirs) {
    const files = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.split(path.sep).includes('node_modules'),
    );
    for (const file of files) {
      const from = `${dir}/${file.split(path.sep).join('/')}`;
      const text = readFileSync(path.join(root, from), 'utf8');
      const targets = new Set<string>();
      for (const match of text.matchAll(
        /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'([^']+)'|(?:^|\n)\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g,
      )) {
        const spec = match[1] ?? match[2] ?? match[3];
        targets.add(spec.startsWith('.') ? path.posix.join(path.posix.dirname(from), spec).replace(/\.js$/, '.ts') : spec);
      }
      graph.set(from, targets);
    }
  }
  return graph;
}
