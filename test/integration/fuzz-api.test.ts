import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildOpenApi } from '../../src/http/openapi.js';
import { apiRoutes } from '../../src/routes/index.js';
import { checkConformance } from '../support/contract.js';
import {
  fuzzFamily,
  operationsOf,
  prepareFuzzTargets,
  problemOf,
  requestFamilies,
  runsOf,
  type FuzzTargets,
} from '../support/fuzz-requests.js';
import { createTenant, useTestServer, type Tenant } from '../support/harness.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: the imports and events this file makes must not reach another file's workers.
useOwnQueuePrefix('fz');

/**
 * Every operation of the OpenAPI document, with requests generated from its own schemas by fast-check
 * (valid ones, and families of wrong ones: test/support/fuzz-requests.ts): no answer is a 5xx, every
 * answer is one the document describes (status and body), every error carries the contract's body.
 * A fixed seed and a bounded count here; `npx tsx bench/fuzz.ts` runs longer, with any seed.
 */

const seed = 39;

const server = useTestServer();
const document = buildOpenApi(apiRoutes) as Record<string, any>;
const operations = operationsOf(document);
let tenant: Tenant;
let targets: FuzzTargets;
const statuses = new Map<number, number>();

beforeAll(async () => {
  tenant = await createTenant({ key: { rateLimitPerMinute: 100_000_000 } });
  targets = await prepareFuzzTargets(server.url, tenant.key, tenant.venueId, document);
});

afterAll(() => {
  const requests = [...statuses.values()].reduce((a, b) => a + b, 0);
  const fivexx = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
  const byStatus = [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
  console.log(`Fuzz (seed ${seed}): ${operations.length} operations, ${requests} requests, ${fivexx} × 5xx; ${byStatus}`);
});

describe('requests generated from the OpenAPI document (fast-check)', () => {
  it('covers every operation the server routes', () => {
    expect(operations.length).toBe(apiRoutes.length);
  });

  for (const operation of operations) {
    it(`${operation.method} ${operation.path}: never a 5xx, always a documented answer`, async () => {
      for (const [i, family] of requestFamilies(operation, document, targets, tenant.key).entries()) {
        await fuzzFamily(server.url, family, { seed: seed + i, numRuns: runsOf(family.name, 1) }, (request, answer) => {
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const problem = problemOf(answer);
          if (problem)
            throw new Error(`${request.method} ${request.url.slice(0, 300)} [${request.variant}] → ${answer.status}: ${problem}`);
          checkConformance(request.method, `${server.url}/api/v1${request.url}`, answer.status, answer.headers, answer.text);
        });
      }
    });
  }
});
