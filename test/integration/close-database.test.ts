import { spawn } from 'node:child_process';
import { once } from 'node:events';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createOwnDatabase } from '../support/own-database.js';

const own = await createOwnDatabase('pgtype');
afterAll(() => own.drop());

describe('ending the pools at a stop (src/db/close-database.ts)', () => {
  it('exits cleanly while a connection of the pool is still reading the server types (PostgreSQL not answering it)', async () => {
    // The lock holds up the driver's type lookup on a new connection of that database, as a
    // PostgreSQL that stopped answering would.
    const locker = postgres(own.url, { max: 1, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = locker.begin(async (tx) => {
      await tx`lock table pg_catalog.pg_type in access exclusive mode`;
      await released;
    });
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/end-while-connecting.ts', own.url], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(output).toMatch(/closed \(the query: .*CONNECTION_DESTROYED/);
      expect(code, output).toBe(0);
    } finally {
      release();
      await held;
      await locker.end();
    }
  }, 30_000);
});
