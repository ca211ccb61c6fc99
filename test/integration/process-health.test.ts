import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { markProcessState, type ProcessState } from '../../src/core/process-state.js';
import { processConfig } from '../../src/config.js';
import { startMetricsServer } from '../../src/monitoring/metrics-server.js';
import { compiledEntry } from '../support/entry-process.js';

describe('processes that tell the truth (docs/operations.md "Metrics and health")', () => {
  // Both web entries: `npm start -- --role web` and the Procfile's `dist/src/server.js`.
  it.each([[[compiledEntry('src/main.ts'), '--role', 'web']], [[compiledEntry('src/server.ts')]]])(
    'a web process whose port is taken exits non-zero with one line naming the port (%j)',
    async (entry) => {
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(0, resolve));
      const port = (holder.address() as net.AddressInfo).port;
      let child: ReturnType<typeof spawn> | undefined;
      try {
        child = spawn(process.execPath, entry, {
          env: { ...process.env, PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        const [code] = (await once(child, 'exit')) as [number | null];
        expect(code, output).not.toBe(0);
        expect(code, output).not.toBeNull();
        const naming = output.split('\n').filter((line) => line.includes(`PORT ${port} is already in use`));
        expect(naming, output).toHaveLength(1);
        expect(JSON.parse(naming[0])).toMatchObject({ level: 60, msg: 'start-up failed' });
        expect(output).not.toContain('web listening');
        expect(output).not.toContain('role started');
      } finally {
        // A process that stayed up despite the taken port (the defect this protects against) is not left behind.
        if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        holder.close();
      }
    },
    60_000,
  );

  // In this order: the state of a process only moves forward.
  it.each<{ state: Exclude<ProcessState, 'starting'> | null; healthz: [number, string]; readyz: [number, string] }>([
    // null: as a process starts, before its roles have started.
    { state: null, healthz: [503, 'starting'], readyz: [503, 'starting'] },
    { state: 'serving', healthz: [200, 'ok'], readyz: [200, 'ok'] },
    // Draining: still alive, no longer ready.
    { state: 'stopping', healthz: [200, 'ok'], readyz: [503, 'stopping'] },
  ])('the metrics port answers /healthz and /readyz for a process $state', async ({ state, healthz, readyz }) => {
    if (state) markProcessState(state);
    const metrics = await startMetricsServer(processConfig(), 0);
    try {
      for (const [path, [status, said]] of [
        ['/healthz', healthz],
        ['/readyz', readyz],
      ] as const) {
        const res = await fetch(`http://127.0.0.1:${metrics.port}${path}`);
        expect([path, res.status, ((await res.json()) as { status: string }).status]).toEqual([path, status, said]);
      }
    } finally {
      await metrics.close();
    }
  });
});
