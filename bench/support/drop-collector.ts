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
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
