import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findImportCycles, findLayerViolations, type ImportGraph } from '../support/import-graph.js';
import { findUpwardArrows, floorOf, readImportGraph, repositoryFloors } from '../support/import-floors.js';

const root = path.resolve(import.meta.dirname, '../..');

// What the low modules (tracing, the Redis building blocks, the counters) may not import: the
// process's configuration and every layer of the application above them.
const applicationLayers = [
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
];

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
  { layer: 'src/services/', mayNotImport: ['src/monitoring/', 'src/http/', 'src/routes/', 'src/roles/', 'express'] },
  // A job kind's definition (queue, payload schema, options, enqueue): services import it to enqueue;
  // its handler calls the services and sits with the role that runs it (src/roles/*-handler.ts).
  { layer: 'src/jobs/', mayNotImport: ['src/services/', 'src/http/', 'src/routes/', 'src/roles/', 'express'] },
  // The counters are observed into from every layer, so they import nothing of src/ but the trace ids
  // of their exemplars; what is read at scrape time (queues, tables, health) is src/monitoring/.
  {
    layer: 'src/metrics/',
    mayNotImport: [...applicationLayers, 'src/monitoring/'],
  },
  { layer: 'src/monitoring/', mayNotImport: ['src/services/', 'src/http/', 'src/routes/', 'src/roles/', 'express'] },
  {
    layer: 'src/tracing/',
    mayNotImport: applicationLayers,
  },
  { layer: 'src/http/', mayNotImport: ['src/roles/', 'src/cli/'] },
  { layer: 'src/routes/', mayNotImport: ['src/roles/', 'src/cli/'] },
  { layer: 'src/roles/', mayNotImport: ['src/cli/'] },
  // The operator's commands call the domain directly: no HTTP, no process roles.
  { layer: 'src/cli/', mayNotImport: ['src/http/', 'src/routes/', 'src/roles/', 'express'] },
  { layer: 'src/queues/', mayNotImport: ['src/http/', 'src/routes/', 'src/roles/', 'express'] },
  // Connections, key layout and scripts are built from the values they are given, never from the
  // process's configuration (src/redis.ts passes it for now).
  {
    layer: 'src/redis/',
    mayNotImport: applicationLayers,
  },
];

describe('dependency rules of src/', () => {
  const graph = readImportGraph(root, ['src']);

  it('reads the real source tree', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/http/define-route.ts')).toContain('express');
  });

  it('keeps every layer free of the layers above it (the domain knows nothing of HTTP)', () => {
    expect(findLayerViolations(graph, layerRules)).toEqual([]);
  });

  it('gives every folder of src/ a layer rule', () => {
    const folders = readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}/`);
    expect(folders.filter((folder) => !layerRules.some((rule) => rule.layer === folder))).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(findImportCycles(graph)).toEqual([]);
  });

  it('gives services their settings: none reads the process configuration', () => {
    expect(servicesReadingTheConfiguration(readSources('src/services'))).toEqual([]);
  });

  it("passes a request's signal down instead of holding it in an AsyncLocalStorage: no module of src/ uses node:async_hooks (one store makes every promise of the process run async hooks, some 250 per booking)", () => {
    expect([...readSources('src')].filter(([, text]) => /from\s+['"](node:)?async_hooks['"]/.test(text)).map(([file]) => file)).toEqual([]);
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

describe('the repository drawn floor by floor (test/support/import-floors.ts)', () => {
  const graph = readImportGraph(root, [
    'src',
    'workers',
    'clients/typescript/src',
    'clients/typescript/scripts',
    'clients/typescript/examples',
  ]);

  it('places every module on a floor', () => {
    expect([...graph.keys()].filter((module) => floorOf(module, repositoryFloors) === undefined)).toEqual([]);
  });

  it('has no import running back up a floor (job handlers sit with the roles, the scrape-time reader above the services, the client reads openapi.json)', () => {
    expect([...findUpwardArrows(graph, repositoryFloors)]).toEqual([]);
  });
});

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

  it('reports an import running back up a floor, once per pair of boxes, not one across a floor or down', () => {
    const floors = [['src/lib/'], ['src/queues/', 'src/config.ts'], ['src/services/']];
    const drawn: ImportGraph = new Map([
      ['src/queues/a.ts', new Set(['src/services/x/run.ts', 'src/services/y.ts', 'src/config.ts', 'src/lib/z.ts'])],
      ['src/lib/z.ts', new Set(['src/lib/w.ts', 'zod'])],
    ]);
    expect([...findUpwardArrows(drawn, floors)]).toEqual([
      ['src/queues/ -> src/services/', ['src/queues/a.ts imports src/services/x/run.ts', 'src/queues/a.ts imports src/services/y.ts']],
    ]);
  });

  it('reports a cycle', () => {
    expect(findImportCycles(sample)).toEqual([['src/lib/x.ts', 'src/lib/y.ts']]);
  });
});
