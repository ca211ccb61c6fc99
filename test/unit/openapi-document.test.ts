import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { buildOpenApi, operationIdOf } from '../../src/http/openapi.js';
import { eventTypes, operatorEventTypes } from '../../src/lib/event-catalogue.js';
import { apiRoutes } from '../../src/routes/index.js';

type Json = Record<string, any>;

const document = buildOpenApi(apiRoutes) as Json;
const label = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;
const operations = Object.entries(document.paths as Json).flatMap(([p, ops]) =>
  Object.entries(ops as Json).map(([method, op]) => ({ path: p, method, op: op as Json })),
);

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and every route declares its success answers, including its success status', () => {
    expect(document.openapi).toBe('3.1.0');
    for (const r of apiRoutes) {
      expect(r.responses, label(r)).toBeDefined();
      expect(Object.keys(r.responses ?? {}), label(r)).toContain(String(r.successStatus ?? 200));
    }
  });

  it('gives every operation a unique camelCase operationId', () => {
    const ids = apiRoutes.map(operationIdOf);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
  });

  it('lists for every operation the errors that follow from its definition', () => {
    for (const { path: p, method, op } of operations) {
      const statuses = Object.keys(op.responses);
      const where = `${method} ${p}`;
      expect(statuses, where).toContain('500');
      if (op.security.length) expect(statuses, where).toEqual(expect.arrayContaining(['401', '403', '429', '503']));
      if (p.includes('{')) expect(statuses, where).toContain('404');
      if (op.requestBody || op.parameters.some((x: Json) => x.in === 'query')) expect(statuses, where).toContain('400');
    }
  });

  it('describes each event type of the catalogue as a webhook, with the signature headers', () => {
    // Operator events are listed and streamed, never sent as webhooks.
    expect(Object.keys(document.webhooks).sort()).toEqual(
      eventTypes.filter((t) => !(operatorEventTypes as readonly string[]).includes(t)).sort(),
    );
    const created = document.webhooks.reservation_created.post;
    expect(created.parameters.map((p: Json) => p.$ref)).toEqual([
      '#/components/parameters/X-Service-Signature',
      '#/components/parameters/X-Service-Timestamp',
      '#/components/parameters/X-Service-Idempotency-Key',
      '#/components/parameters/webhook-id',
      '#/components/parameters/webhook-timestamp',
      '#/components/parameters/webhook-signature',
    ]);
    expect(created.description).toContain('HMAC-SHA256');
    expect(created.requestBody.content['application/json'].schema.properties.data.$ref).toBe('#/components/schemas/ReservationEventData');
  });

  it('has request and response examples that match their own schemas', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(document, 'doc');
    const pointer = (...segments: string[]) =>
      segments.map((x) => '/' + encodeURIComponent(x.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
    let checked = 0;
    for (const { path: p, method, op } of operations) {
      const media = [
        ...(op.requestBody ? [['requestBody', 'content', 'application/json']] : []),
        ...Object.keys(op.responses as Json).map((status) => ['responses', status, 'content', 'application/json']),
      ];
      for (const where of media) {
        const m = where.reduce((node: Json | undefined, key) => node?.[key], op);
        if (m?.example === undefined) continue;
        const validate = ajv.compile({ $ref: `doc#${pointer('paths', p, method, ...where, 'schema')}` });
        expect(validate(m.example), `${method} ${p} ${where.join('.')}: ${JSON.stringify(validate.errors)}`).toBe(true);
        checked++;
      }
    }
    for (const [type, item] of Object.entries(document.webhooks as Json)) {
      const example = item.post.requestBody.content['application/json'].example;
      if (example === undefined) continue;
      const validate = ajv.compile({
        $ref: `doc#${pointer('webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema')}`,
      });
      expect(validate(example), `webhook ${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(17);
  });

  /** Runs a linter on the document written to a file of its own; `run(file)` gives the problems as lines. */
  async function lint(run: (file: string, cwd: string) => Promise<string[]>): Promise<string[]> {
    const dir = await mkdtemp(path.join(tmpdir(), 'openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      return await run(file, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const exec = (command: string, args: string[], cwd: string) =>
    promisify(execFile)(path.resolve('node_modules/.bin', command), args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout: string; stderr: string }) => error);

  it('passes redocly lint (recommended rules) with no error and no warning', async () => {
    const problems = await lint(async (file, cwd) => {
      const result = await exec('redocly', ['lint', file, '--format=json'], cwd);
      const { problems } = JSON.parse(result.stdout) as { problems: { ruleId: string; severity: string; message: string }[] };
      return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`);
    });
    expect(problems.slice(0, 20)).toEqual([]);
  }, 60_000);

  it('passes spectral lint (spectral:oas, the ruleset of .spectral.yaml) with no error and no warning', async () => {
    const problems = await lint(async (file, cwd) => {
      const result = await exec('spectral', ['lint', file, '--ruleset', path.resolve('.spectral.yaml'), '--format=json', '--quiet'], cwd);
      const found = JSON.parse(result.stdout.trim() || '[]') as { code: string; severity: number; message: string; path: string[] }[];
      // Severity 0 is an error, 1 a warning (2 information, 3 hint).
      return found
        .filter((p) => p.severity <= 1)
        .map((p) => `${p.severity ? 'warning' : 'error'} ${p.code}: ${p.message} at ${p.path.join('.')}`);
    });
    expect(problems.slice(0, 20)).toEqual([]);
  }, 120_000);
});
