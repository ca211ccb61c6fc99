import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Each log line carries its own fields and no other line's. The logger's mixin (a line's trace ids,
 * docs/operations.md "Tracing") is merged by pino into the object the mixin returns: a shared object
 * returned there gathered every field ever logged, so that with tracing off each line carried the
 * request id, path and status of the requests before it.
 */
function linesOf(script: string): Array<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'log-lines-'));
  try {
    const file = path.join(dir, 'log.mts');
    writeFileSync(
      file,
      `const { logger, writeRequestLine } = await import(${JSON.stringify(pathToFileURL(path.resolve('src/logger.ts')).href)});\n${script}`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'info' } });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('log lines', () => {
  it('carry only their own fields: none of a request line, a child logger or an earlier line', () => {
    const lines = linesOf(`
      writeRequestLine({ requestId: 'r-1', method: 'POST', path: '/api/v1/reservations', status: 201, ms: 3, keyId: null, ip: '127.0.0.1' });
      logger.info({ deliveryId: 'd-1' }, 'first');
      logger.child({ role: 'web' }).info('from a child');
      logger.info('after them');
    `);
    expect(lines.map((l) => l.msg)).toEqual(['request', 'first', 'from a child', 'after them']);
    const [request, first, child, after] = lines;
    expect(request).toMatchObject({ requestId: 'r-1', status: 201 });
    expect(first.deliveryId).toBe('d-1');
    expect(first).not.toHaveProperty('requestId');
    expect(child).toMatchObject({ role: 'web' });
    expect(child).not.toHaveProperty('deliveryId');
    for (const field of ['requestId', 'method', 'path', 'status', 'deliveryId', 'role']) expect(after).not.toHaveProperty(field);
  });
});
