import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import { checkAddress } from '../../lib/ip-address-check.js';
import { logger } from '../../logger.js';
import {
  giveBackConnection,
  openConnection,
  takeConnection,
  type CheckedAddress,
  type DestinationConnection,
} from './destination-connections.js';

export const webhookTimeoutMs = 10_000;
export const webhookUserAgent = 'service-webhook/1';

/**
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS of the app or worker that sends (tests and local development: private
 * addresses and plain http), handed to it by its composition root and read at every send.
 */
export type WebhookTargetSettings = Pick<Config, 'WEBHOOKS_ALLOW_PRIVATE_TARGETS'>;

export interface WebhookPost {
  url: string;
  /** The signed headers of docs/webhooks.md (Content-Type and User-Agent are added here). */
  headers: Record<string, string>;
  body: Buffer;
  /** Deliver to non-public addresses and over plain http (tests only; refused in production by config). */
  allowPrivate: boolean;
  timeoutMs?: number;
}

export interface WebhookOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
  /**
   * The outcome in one line naming the partner's host, e.g. `HTTP 500 from partner.example.com`,
   * `timeout after 10000 ms from partner.example.com`, `connection refused by partner.example.com`:
   * the attempt log's error and the worker's job log (the delivery's lastError keeps `error`).
   */
  summary: string;
  /** The first 1,024 bytes of the answer's body as text; null when there was no answer. */
  bodyExcerpt: string | null;
}

/** How much of an answer's body is read and kept: a partner's error page, not a download. */
export const bodyExcerptBytes = 1024;

/**
 * The excerpt as text: invalid UTF-8 (or a character cut at the 1,024th byte) becomes U+FFFD, and so
 * does U+0000, which PostgreSQL text cannot store.
 */
function excerptOf(body: Buffer): string {
  return body.subarray(0, bodyExcerptBytes).toString('utf8').replaceAll('\u0000', '\ufffd');
}

/**
 * What a refused destination is told, in test sends and delivery records alike: a fixed reason and
 * a generic message. The resolved addresses and the resolver's error would let any key with
 * webhooks:write map internal host names and their addresses; they go to the server log only.
 * A host that does not resolve gets the same answer as one that resolves to an internal address.
 */
export const destinationNotAllowed = 'destination_not_allowed: the destination must resolve to public addresses only; not sent';

/** A destination refused before any connection; the message is the detail for the server log. */
class RefusedTarget extends Error {}

/** Errors (as codeOf says them) of a kept-alive connection the server had just closed: the request never reached it. */
const staleConnectionCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Resolves the host once and checks every address it has; the checked address is the one connected to. */
async function resolveTarget(host: string, allowPrivate: boolean): Promise<CheckedAddress> {
  const literal = isIP(host);
  let addresses: CheckedAddress[];
  try {
    addresses = literal ? [{ address: host, family: literal }] : await lookup(host, { all: true, verbatim: true });
  } catch (err) {
    throw new RefusedTarget(`${host} does not resolve: ${(err as Error).message}`);
  }
  if (!addresses.length) throw new RefusedTarget(`${host} has no address`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const verdict = checkAddress(address);
      // A host with one internal address among public ones is refused too: the connection could land on it.
      if (!verdict.public) throw new RefusedTarget(`address ${address} of ${host} is not public (${verdict.reason}); not sent`);
    }
  }
  return addresses[0];
}

/** The code of a failed request: a connection closed without an answer is `ECONNRESET`, as Node's own sockets say. */
function codeOf(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'UND_ERR_SOCKET' ? 'ECONNRESET' : code;
}

/**
 * A failed connection, said without the address connected to (Node's messages name it, e.g.
 * `connect ECONNREFUSED 10.1.2.3:443`, and TLS ones the host's addresses): the code alone.
 */
function describeError(err: unknown): string {
  const code = codeOf(err);
  return code ? `connection failed (${code})` : 'connection failed';
}

function summariseError(err: unknown, host: string): string {
  return codeOf(err) === 'ECONNREFUSED' ? `connection refused by ${host}` : `${describeError(err)} to ${host}`;
}

/**
 * One POST of a webhook (docs/webhooks.md): address check at every call, connection to the checked
 * address (no second DNS lookup; the host name still goes to TLS SNI and Host), no redirects
 * (a 3xx is a failure), 10 s in all including the lookup and the body's excerpt. Success is a 2xx answer.
 */
export async function postWebhook(post: WebhookPost): Promise<WebhookOutcome> {
  const started = performance.now();
  const { allowPrivate } = post;
  const timeoutMs = post.timeoutMs ?? webhookTimeoutMs;
  const done = (status: number | null, error: string | null, summary = error ?? '', body: Buffer | null = null): WebhookOutcome => ({
    ok: error === null,
    status,
    error,
    durationMs: Math.round(performance.now() - started),
    summary,
    bodyExcerpt: body && excerptOf(body),
  });

  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    return done(null, 'invalid address');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowPrivate)) return done(null, 'only https addresses receive webhooks');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const answered = (status: number, body: Buffer, error: string | null) => done(status, error, `HTTP ${status} from ${url.host}`, body);

  // The 10 s cover the lookup, the request and the excerpt: when they run out, a lookup still under
  // way is given up, and the connection in use is closed, which ends its request or the reading of
  // its answer. (A connection is one request's at a time: closing it is this request's abort, without
  // an AbortSignal, which costs more than the rest of the request's setup.)
  let timedOut = false;
  let connection: DestinationConnection | undefined;
  let giveUpLookup: (() => void) | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    giveUpLookup?.();
    connection?.close();
  }, timeoutMs);
  timer.unref();
  try {
    const target = await Promise.race([
      resolveTarget(host, allowPrivate),
      new Promise<never>((_, reject) => (giveUpLookup = () => reject(new Error('timeout')))),
    ]);
    const origin = `${url.protocol}//${url.host}`;
    const send = async (sending: DestinationConnection): Promise<{ status: number; body: Buffer }> => {
      connection = sending;
      const answer = await sending.client
        .request({
          method: 'POST',
          path: `${url.pathname}${url.search}`,
          headers: { 'Content-Type': 'application/json', 'User-Agent': webhookUserAgent, ...post.headers },
          body: post.body,
        })
        .catch((err: unknown) => {
          sending.close();
          throw err;
        });
      // The status decides; the body is read for its first 1,024 bytes only. A short body is read to
      // its end, so the connection is reused; a longer one is not read further (nor buffered): the
      // connection is closed instead. A body cut short (the timeout, a reset) keeps what arrived.
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of answer.body as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= bodyExcerptBytes) break;
        }
      } catch {
        // What arrived is the excerpt.
      }
      if (answer.body.readableEnded) {
        sending.answered++;
        giveBackConnection(origin, sending);
      } else sending.close();
      return { status: answer.statusCode, body: Buffer.concat(chunks) };
    };
    const first = takeConnection(origin, target);
    const { status, body } = await send(first).catch((err: unknown) => {
      // A kept-alive connection closed by the server as we wrote: once more on a new connection.
      if (first.answered && staleConnectionCodes.has(codeOf(err) ?? '') && !timedOut) return send(openConnection(origin, target));
      throw err;
    });
    if (status >= 200 && status < 300) return answered(status, body, null);
    if (status >= 300 && status < 400) return answered(status, body, `redirect (HTTP ${status}) not followed`);
    return answered(status, body, `HTTP ${status}`);
  } catch (err) {
    if (timedOut) return done(null, `no answer within ${timeoutMs / 1000} s`, `timeout after ${timeoutMs} ms from ${url.host}`);
    if (err instanceof RefusedTarget) {
      logger.warn({ host, detail: err.message }, 'webhook destination refused');
      return done(null, destinationNotAllowed, `address refused: ${url.host} must resolve to public addresses only`);
    }
    logger.info({ host, err }, 'webhook connection failed');
    return done(null, describeError(err), summariseError(err, url.host));
  } finally {
    clearTimeout(timer);
  }
}
