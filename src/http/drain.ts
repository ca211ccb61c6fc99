import net from 'node:net';
import type { Server, ServerResponse } from 'node:http';

/** How long an idle keep-alive connection may still bring a request during the drain. */
const idleGraceMs = 1000;

export interface DrainOptions {
  /** Requests still running this long after the drain started are cut. */
  hardLimitMs: number;
  /**
   * Ends the long-lived responses (the Server-Sent Events streams), which never finish on their own:
   * called as the drain starts, so that they end cleanly (the client resumes elsewhere with
   * Last-Event-ID) instead of holding the process until the hard limit.
   */
  endStreams?: () => Promise<void>;
}

/**
 * Graceful stop of an HTTP server (README.md "Command line"): no request the server accepted is lost.
 * Tracks the server's responses so that a drain can answer each with `Connection: close`. Call once,
 * before the server serves anything; returns the drain, which resolves once every connection closed.
 *
 * The drain: (1) the listener closes at once: new connections are refused, and a client retries them
 * elsewhere; (2) every response not yet sent, and every one started from now on, carries
 * `Connection: close`, so a busy keep-alive connection closes right after its current response
 * instead of taking new requests; (3) long-lived streams end (`endStreams`); (4) idle
 * keep-alive connections are closed after `idleGraceMs` — not at once, because a request the client
 * has just written on one would be reset, and a client that keeps sending gets its next request
 * answered (with `Connection: close`) within that time; (5) after `hardLimitMs` whatever is left is
 * destroyed.
 */
export function prepareDrain(server: Server, { hardLimitMs, endStreams }: DrainOptions): () => Promise<void> {
  let draining = false;
  const open = new Set<ServerResponse>();
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) {
      res.setHeader('Connection', 'close');
      return;
    }
    open.add(res);
    res.on('close', () => open.delete(res));
  });
  return async () => {
    draining = true;
    // net.Server's close, not http.Server's: that one also closes idle connections at once (step 4).
    const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
    for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
    const idle = setTimeout(() => {
      server.closeIdleConnections();
      // A stream opened on a kept-alive connection during the grace ends too.
      endStreams?.().catch(() => {});
    }, idleGraceMs);
    const hard = setTimeout(() => server.closeAllConnections(), hardLimitMs);
    await endStreams?.();
    await closed;
    clearTimeout(idle);
    clearTimeout(hard);
  };
}
