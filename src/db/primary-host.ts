import net from 'node:net';
import postgres from 'postgres';
import { parseDatabaseUrl, type DatabaseHost, type DatabaseUrl } from '../lib/database-url.js';

/** What the driver is given for a configured URL: the URL it parses, and options to spread into its own. */
export interface ServerOptions {
  url: string;
  /**
   * `socket`: the driver's documented custom socket (README "Custom socket"; absent from its type
   * declarations, hence spread rather than written in the options' literal).
   */
  driver: { socket?: () => Promise<net.Socket>; target_session_attrs?: 'primary' };
}

/** A search for the writable host starts at most this often (each is one connection per host). */
const searchEveryMs = 250;
/** How long a search waits for a host that does not answer (a machine gone, not a refused port). */
const probeTimeoutSeconds = 2;

/**
 * The driver's options for `url`: its connections are opened here (the driver's `socket` option),
 * so that a server or proxy that accepts a connection and closes it before answering fails the
 * queries waiting for it. The driver (postgres 3.4.9) otherwise reconnects at once, again and again,
 * holding them: through HAProxy with no primary up (it accepts, finds no server, closes), requests
 * hung until one was, where they must answer 503.
 *
 * One host: the URL as it is. Several hosts (`h1:p1,h2:p2`): the driver is given the first host in
 * the URL, and each of its connections is opened to the host that was last found accepting writes;
 * a connection to it that closes (the server died, restarted, or turned out a standby, which
 * `target_session_attrs=primary` has the driver refuse) starts a new search. The driver's own
 * handling of several hosts is not used: while none accepts writes it tries them in a loop without
 * pause and holds every query until one does, and its `read-write` looks at
 * default_transaction_read_only only, which takes a hot standby.
 */
export function serverOptionsOf(url: string): ServerOptions {
  const parsed = parseDatabaseUrl(url);
  if (typeof parsed === 'string') return { url, driver: {} };
  if (parsed.hosts.length === 1) {
    const [host] = parsed.hosts;
    return { url, driver: { socket: async () => openSocket(host) } };
  }
  return { url: parsed.urlFor(parsed.hosts[0]), driver: { socket: followPrimary(parsed), target_session_attrs: 'primary' } };
}

/** A connection to `host` that, closed by the other end before a byte came back, says so as an error. */
function openSocket({ host, port }: DatabaseHost): net.Socket {
  const socket = net.connect({ host, port });
  socket.once('close', (hadError) => {
    if (!hadError && socket.bytesRead === 0) {
      socket.emit('error', Object.assign(new Error(`${host}:${port} closed the connection before answering`), { code: 'ECONNRESET' }));
    }
  });
  return socket;
}

/** Opens sockets to the host accepting writes, searching again whenever one of them closes. */
function followPrimary(parsed: DatabaseUrl): () => Promise<net.Socket> {
  let current: DatabaseHost | null = null;
  let found = false;
  let search: Promise<void> | null = null;
  let searchedAt = 0;

  async function acceptsWrites(host: DatabaseHost): Promise<boolean> {
    const probe = postgres(parsed.urlFor(host), {
      max: 1,
      connect_timeout: probeTimeoutSeconds,
      prepare: false,
      fetch_types: false,
      onnotice: () => {},
      // Documented option absent from the driver's types (see ServerOptions): a proxy that closes at once fails the probe.
      ...{ socket: async () => openSocket(host) },
    });
    try {
      const [{ writable }] = await probe<{ writable: boolean }[]>`
        select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable`;
      return writable;
    } catch {
      return false;
    } finally {
      await probe.end({ timeout: 0 });
    }
  }

  /** One search at a time, and at most one per searchEveryMs: while no host accepts writes, connecting waits for the next. */
  function searchAgain(): Promise<void> {
    search ??= (async () => {
      const wait = searchedAt + searchEveryMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const writable = await Promise.all(parsed.hosts.map(acceptsWrites));
      // The host in use stays while it accepts writes; otherwise the first that does, in the URL's order.
      const stay = current !== null && writable[parsed.hosts.indexOf(current)];
      const first = parsed.hosts.find((_, i) => writable[i]);
      if (!stay && first) current = first;
      found = stay || first !== undefined;
    })().finally(() => {
      search = null;
      searchedAt = Date.now();
    });
    return search;
  }

  return async () => {
    // A search under way is waited for, and so is a new one while none was found: the connection
    // then goes where it found (and attempts to a dead host are spaced, not a loop).
    if (search || !found) await searchAgain();
    const socket = openSocket(current ?? parsed.hosts[0]);
    socket.once('close', () => void searchAgain());
    return socket;
  };
}
