import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSchemaTypes } from '../../clients/typescript/scripts/generate-types.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { apiRoutes } from '../../src/routes/index.js';

/**
 * Clients made from the OpenAPI document by two generators the project did not write, unconfigured:
 * openapi-typescript (types for openapi-fetch) and @hey-api/openapi-ts (a fetch client and its SDK).
 * A small program books and lists with each, and must typecheck against what they generated; the
 * hey-api client calls the document's first server, an absolute URL, without being told a base URL.
 */

const root = process.cwd();
const run = promisify(execFile);
let dir: string;

/** Books and lists with both clients; the @ts-expect-error lines fail the check if the types were `any`. */
const program = `
import createClient from 'openapi-fetch';
import type { paths } from './openapi-typescript/schema.js';
import { client } from './hey-api/client.gen.js';
import { createReservation, listReservations } from './hey-api/index.js';

const typed = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000/api/v1', headers: { authorization: 'Bearer gsk_example' } });

export async function bookWithOpenapiTypescript(venueId: string): Promise<string> {
  const booked = await typed.POST('/reservations', { body: { venueId, serviceDate: '2030-01-01', time: '19:00', partySize: 2 } });
  if (booked.error) return booked.error.error.code;
  const listed = await typed.GET('/reservations', { params: { query: { venueId, from: '2030-01-01', to: '2030-01-31', limit: 10 } } });
  // @ts-expect-error partySize is a number
  await typed.POST('/reservations', { body: { venueId, partySize: 'two' } });
  return \`\${booked.data.reservation.id} \${listed.data?.data.length ?? 0}\`;
}

export async function bookWithHeyApi(venueId: string): Promise<string> {
  client.setConfig({ headers: { authorization: 'Bearer gsk_example' } });
  const booked = await createReservation({ body: { venueId, serviceDate: '2030-01-01', time: '19:00', partySize: 2 } });
  if (booked.error) return booked.error.error.code;
  const listed = await listReservations({ query: { venueId, from: '2030-01-01', to: '2030-01-31' } });
  // @ts-expect-error a Reservation has no price
  const price: number = booked.data!.reservation.price;
  return \`\${booked.data!.reservation.startsAt} \${listed.data?.data.length ?? 0} \${price}\`;
}
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'openapi-generators-'));
  await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(buildOpenApi(apiRoutes)));
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('clients generated from the OpenAPI document by other tools, unconfigured', () => {
  it('the first server is an absolute URL (the local one), the second names scheme and host as variables', () => {
    const { servers } = buildOpenApi(apiRoutes) as { servers: { url: string; variables?: Record<string, { default: string }> }[] };
    expect(servers[0].url).toBe('http://127.0.0.1:3000/api/v1');
    const resolved = servers[1].url.replace(/\{(\w+)\}/g, (_m, name: string) => servers[1].variables![name].default);
    expect(resolved).toBe(servers[0].url);
  });

  it('openapi-typescript and @hey-api/openapi-ts generate clients that a program typechecks against', async () => {
    await mkdir(path.join(dir, 'openapi-typescript'));
    await writeFile(path.join(dir, 'openapi-typescript', 'schema.d.ts'), await generateSchemaTypes());
    // The workspace's own binary: @hey-api/openapi-ts needs the TypeScript 5 the client workspace holds.
    await run('npx', ['openapi-ts', '--input', path.join(dir, 'openapi.json'), '--output', path.join(dir, 'hey-api'), '--silent'], {
      cwd: path.join(root, 'clients/typescript'),
    });
    expect(await readFile(path.join(dir, 'hey-api', 'client.gen.ts'), 'utf8')).toContain("baseUrl: 'http://127.0.0.1:3000/api/v1'");

    await writeFile(path.join(dir, 'program.ts'), program);
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2022', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
          paths: { 'openapi-fetch': [path.join(root, 'node_modules/openapi-fetch')] },
        },
        files: ['program.ts'],
      }),
    );
    const checked = await run(path.join(root, 'node_modules/.bin/tsc'), ['-p', dir]).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(checked.stdout + checked.stderr).toBe('');
  }, 120_000);
});
