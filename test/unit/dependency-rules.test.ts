import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findImportCycles, findLayerViolations, type ImportGraph } from '../support/import-graph.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Every module of src/ and the modules (relative files or packages) it imports, type-only imports included. */
function readSourceGraph(): ImportGraph {
  const graph: ImportGraph = new Map();
  const files = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.d.ts'),
  );
  for (const file of files) {
    const from = `src/${file.split(path.sep).join('/')}`;
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
  return graph;
}

// The layers, lowest first; a module may import its own layer and those below it, never above.
// src/core and src/lib know nothing of HTTP or Express; the domain (src/services) depends on them;
// src/http and src/routes are the one adapter between HTTP and the domain.
const layerRules = [
  {
    layer: 'src/lib/',
    mayNotImport: ['src/core/', 'src/services/', 'src/http/', 'src/routes/', 'src/queues/', 'src/roles/', 'src/jobs/', 'express'],
  },
  {
    layer: 'src/core/',
    mayNotImport: ['src/services/', 'src/http/', 'src/routes/', 'src/queues/', 'src/roles/', 'src/jobs/', 'src/db/', 'express'],
  },
  { layer: 'src/db/', mayNotImport: ['src/services/', 'src/http/', 'src/routes/', 'src/roles/', 'express'] },
  // The outbox (writing a change's events, numbering them, handing them to the queue) knows nothing of
  // what processing an event does: automations, the waiting list and webhooks sit above it.
  {
    layer: 'src/services/outbox/',
    mayNotImport: [
      'src/http/',
      'src/routes/',
      'src/roles/',
      'express',
      ...readdirSync(path.join(root, 'src/services'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && entry.name !== 'outbox')
        .map((entry) => `src/services/${entry.name}/`),
    ],
  },
  { layer: 'src/services/', mayNotImport: ['src/http/', 'src/routes/', 'src/roles/', 'express'] },
  { layer: 'src/jobs/', mayNotImport: ['src/http/', 'src/routes/', 'src/roles/', 'express'] },
  { layer: 'src/queues/', mayNotImport: ['src/http/', 'src/routes/', 'src/roles/', 'express'] },
  // Connections, key layout and scripts are built from the values they are given, never from the
  // process's configuration (src/redis.ts passes it for now).
  {
    layer: 'src/redis/',
    mayNotImport: [
      'src/config.ts',
      'src/core/',
      'src/db/',
      'src/services/',
      'src/http/',
      'src/routes/',
      'src/queues/',
      'src/roles/',
      'src/jobs/',
      'express',
    ],
  },
];

describe('dependency rules of src/', () => {
  const graph = readSourceGraph();

  it('reads the real source tree', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/http/define-route.ts')).toContain('express');
  });

  it('keeps every layer free of the layers above it (the domain knows nothing of HTTP)', () => {
    expect(findLayerViolations(graph, layerRules)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(findImportCycles(graph)).toEqual([]);
  });

  it('keeps job definitions (src/jobs/*-job.ts) free of services: producers import them, the handlers call the services', () => {
    expect(jobDefinitionsImportingServices(graph)).toEqual([]);
  });

  it('gives services their settings: none reads the process configuration', () => {
    expect(servicesReadingTheConfiguration(readSources('src/services'))).toEqual([]);
  });
});

/** The text of every module under `dir` (relative to the repository), by path. */
function readSources(dir: string): Map<string, string> {
  const files = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  return new Map(files.map((f) => [`${dir}/${f.split(path.sep).join('/')}`, readFileSync(path.join(root, dir, f), 'utf8')]));
}

/**
 * A service is handed what it needs (RouteServices, DeliveryWorker, a constructor, a parameter): it
 * neither asks for the process's configuration nor parses one. Only the Config type may be imported.
 */
function servicesReadingTheConfiguration(sources: Map<string, string>): string[] {
  return [...sources].filter(([, text]) => /\b(processConfig|parseConfig)\b/.test(text)).map(([file]) => file);
}

/** Job definitions (queue name, payload schema, options) import no service: a service enqueueing a job imports its definition. */
function jobDefinitionsImportingServices(sourceGraph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, targets] of sourceGraph) {
    if (!/^src\/jobs\/[^/]+-job\.ts$/.test(from)) continue;
    for (const target of targets) if (target.startsWith('src/services/')) found.push(`${from} imports ${target}`);
  }
  return found;
}

// Dependencies are used through their documented API only: no framework internals replaced or read.
const privateReaches = [
  { pattern: /\bapp\.handle\s*=/, what: "assigns Express's private app.handle" },
  { pattern: /setPrototypeOf/, what: 'sets a prototype' },
  { pattern: /\._\.|\b_\.session\b/, what: "reads drizzle's private `_` member" },
  // Any other `_`-prefixed member of a library object (our own code names nothing so).
  { pattern: /\._[a-z][A-Za-z]*\b/, what: 'reads a `_`-prefixed (private) member' },
  { pattern: /\bexpress\.(request|response)\b/, what: "changes Express's global request or response" },
];

describe('public seams only', () => {
  it('reaches into no library internals', () => {
    const found: string[] = [];
    for (const file of readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(path.join(root, 'src', file), 'utf8');
      for (const { pattern, what } of privateReaches) if (pattern.test(text)) found.push(`src/${file} ${what}`);
    }
    expect(found).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const sample: ImportGraph = new Map([
    ['src/services/a.ts', new Set(['src/http/errors.ts', 'src/lib/x.ts'])],
    ['src/lib/x.ts', new Set(['src/lib/y.ts'])],
    ['src/lib/y.ts', new Set(['src/lib/x.ts'])],
    ['src/http/errors.ts', new Set(['express'])],
  ]);

  it('reports a service that imports the web layer', () => {
    expect(findLayerViolations(sample, layerRules)).toEqual(['src/services/a.ts imports src/http/errors.ts']);
  });

  it('reports a job definition that imports a service, not its handler', () => {
    const jobs: ImportGraph = new Map([
      ['src/jobs/x-job.ts', new Set(['src/services/x/enqueue.ts', 'src/queues/queues.ts'])],
      ['src/jobs/x-handler.ts', new Set(['src/services/x/run.ts'])],
    ]);
    expect(jobDefinitionsImportingServices(jobs)).toEqual(['src/jobs/x-job.ts imports src/services/x/enqueue.ts']);
  });

  it('reports a service that reads the process configuration, not one given a setting', () => {
    const sources = new Map([
      ['src/services/a/reads.ts', "import { processConfig } from '../../config.js';\nconst key = () => processConfig().secretsKey;"],
      [
        'src/services/a/given.ts',
        "import type { Config } from '../../config.js';\nexport const keyOf = (config: Config) => config.secretsKey;",
      ],
    ]);
    expect(servicesReadingTheConfiguration(sources)).toEqual(['src/services/a/reads.ts']);
  });

  it('reports a cycle', () => {
    expect(findImportCycles(sample)).toEqual([['src/lib/x.ts', 'src/lib/y.ts']]);
  });
});
