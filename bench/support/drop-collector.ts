import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DropCollector {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** The bytes of every export received so far. */
  bytes(): number;
  close(): void;
}

/**
 * An OTLP/HTTP collector for the benchmarks that measure tracing: accepts every export and drops it,
 * counting the bytes, so that what is measured is the exporting processes' side alone.
 */
export async function startDropCollector(): Promise<DropCollector> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => { bytes += chunk.length; chunks.push(chunk); });
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) for (const sp of ss.spans) {
          const t = ((globalThis as any).tally ??= new Map());
          const e = t.get(sp.name) ?? { n: 0, bytes: 0, attrs: {} as Record<string, number> };
          e.n++; e.bytes += JSON.stringify(sp).length;
          for (const a of sp.attributes ?? []) e.attrs[a.key] = (e.attrs[a.key] ?? 0) + JSON.stringify(a.value).length;
          t.set(sp.name, e);
        }
      } catch {}
      res.writeHead(200, { 'Content-Type': 'application/json' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => {
      const t = (globalThis as any).tally as Map<string, any>;
      if (t) for (const [k, v] of [...t].sort((a, b) => b[1].bytes - a[1].bytes)) console.log(k.slice(0, 60), v.n, v.bytes, JSON.stringify(v.attrs));
      server.closeAllConnections();
      server.close();
    },
  };
}
