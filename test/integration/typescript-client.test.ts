import { describe, expect, it, vi } from 'vitest';

// Its own queues: another test file's workers must not take these deliveries.
vi.hoisted(() => {
  process.env.QUEUE_PREFIX = `${process.env.QUEUE_PREFIX}tc`;
});

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { generateSchemaTypes, schemaFile } from '../../clients/typescript/scripts/generate-types.js';

describe('the TypeScript client (clients/typescript)', () => {
  it('has the types of the current OpenAPI document: src/schema.d.ts is what the generator writes today', async () => {
    const stale = 'clients/typescript/src/schema.d.ts is stale: run `npm run generate -w @floorline/client` and commit it';
    expect(await readFile(schemaFile, 'utf8'), stale).toBe(await generateSchemaTypes());
  });

  it('typechecks, with its examples, under its own tsconfig (noUncheckedIndexedAccess)', async () => {
    const { stdout } = await promisify(execFile)('npx', ['tsc', '-p', 'clients/typescript'], { env: process.env }).catch((error: { stdout: string }) => error);
    expect(stdout).toBe('');
  });
});
