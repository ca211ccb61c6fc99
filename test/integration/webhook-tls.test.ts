import { execFile, execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A webhook over TLS to a receiver with a certificate for `localhost`, trusted through
// NODE_EXTRA_CA_CERTS, which Node reads only when a process starts: the sends run in a child process.
// The certificate is made for the run (Debian's openssl).
const postWebhookUrl = new URL('../../src/services/webhooks/post-webhook.ts', import.meta.url).href;
let dir: string;
let server: https.Server;
let port: number;
/** Where `localhost` leads first (127.0.0.1 or ::1): the address the sends connect to, and the receiver listens on. */
let localhostAddress: string;
const seen: Array<{
  path: string;
  host: string | undefined;
  servername: string | false | null;
  remoteAddress: string | undefined;
  connection: number;
}> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'webhook-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ].concat(['-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')]),
    { stdio: 'ignore' },
  );
  const connectionOf = new WeakMap<object, number>();
  let connections = 0;
  server = https.createServer(
    { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({
          path: req.url ?? '',
          host: req.headers.host,
          servername: (req.socket as import('node:tls').TLSSocket).servername,
          remoteAddress: req.socket.remoteAddress,
          connection: connectionOf.get(req.socket) ?? 0,
        });
        res.writeHead(204).end();
      });
    },
  );
  server.on('secureConnection', (socket) => connectionOf.set(socket, ++connections));
  [{ address: localhostAddress }] = await lookup('localhost', { all: true, verbatim: true });
  await new Promise<void>((resolve) => server.listen(0, localhostAddress, resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server?.closeAllConnections();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** postWebhook to each address in turn, in a process that trusts the run's certificate; the outcomes. */
async function postFromChild(urls: string[], trust: boolean): Promise<Array<{ status: number | null; error: string | null }>> {
  const script = `import { postWebhook } from ${JSON.stringify(postWebhookUrl)};
const outcomes = [];
for (const url of ${JSON.stringify(urls)}) {
  const { status, error } = await postWebhook({ url, headers: {}, body: Buffer.from('{}'), allowPrivate: true });
  outcomes.push({ status, error });
}
console.log('outcomes ' + JSON.stringify(outcomes));`;
  const env = { ...process.env, ...(trust ? { NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem') } : {}) };
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env });
  // The process's log lines (the failed connections, at level info) come on the same output.
  const line = stdout.split('\n').find((l) => l.startsWith('outcomes '));
  return JSON.parse(line!.slice('outcomes '.length));
}

describe('webhooks over TLS', () => {
  it('connect to the checked address with the host name in SNI and Host, verify the certificate, and keep the connection', async () => {
    seen.length = 0;
    const outcomes = await postFromChild([`https://localhost:${port}/first`, `https://localhost:${port}/second`], true);
    expect(outcomes).toEqual([
      { status: 204, error: null },
      { status: 204, error: null },
    ]);
    expect(seen).toEqual([
      { path: '/first', host: `localhost:${port}`, servername: 'localhost', remoteAddress: localhostAddress, connection: 1 },
      { path: '/second', host: `localhost:${port}`, servername: 'localhost', remoteAddress: localhostAddress, connection: 1 },
    ]);
  }, 30_000);

  it('refuse a certificate that is not trusted or not for the address, naming only the code', async () => {
    seen.length = 0;
    expect(await postFromChild([`https://localhost:${port}/untrusted`], false)).toEqual([
      { status: null, error: 'connection failed (DEPTH_ZERO_SELF_SIGNED_CERT)' },
    ]);
    const literal = localhostAddress.includes(':') ? `[${localhostAddress}]` : localhostAddress;
    expect(await postFromChild([`https://${literal}:${port}/by-address`], true)).toEqual([
      { status: null, error: 'connection failed (ERR_TLS_CERT_ALTNAME_INVALID)' },
    ]);
    expect(seen).toEqual([]);
  }, 30_000);
});
