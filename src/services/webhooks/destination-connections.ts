import type { LookupFunction } from 'node:net';
import { Client } from 'undici';

/** An address of a destination's host that passed the address check (post-webhook.ts). */
export interface CheckedAddress {
  address: string;
  family: number;
}

/**
 * One kept-alive connection of this process to a webhook destination: an undici Client used for the
 * life of one socket. It connects to the address checked when it was opened, and when its socket
 * closes (idle, closed by the receiver, or cut after an answer's excerpt) the Client is closed too
 * and never connects again: a later connection is a new one, to an address checked for its attempt.
 */
export interface DestinationConnection {
  readonly client: Client;
  /** Answers received on it: one that answered before is a reused connection. */
  answered: number;
  closed: boolean;
  /** Closes it for good (a connection not given back: its answer not read to its end, or the request failed). */
  close(): void;
}

/**
 * Idle connections close after 4 s, before the usual 5 s keep-alive of servers (a shorter hint in the
 * server's Keep-Alive header is followed).
 */
const idleSocketMs = 4000;

/** The idle connections by origin, the most recently used last (taken first: it is the least likely to be closing). */
const idleConnections = new Map<string, DestinationConnection[]>();

function forget(origin: string, connection: DestinationConnection): void {
  const idle = idleConnections.get(origin);
  const at = idle?.lastIndexOf(connection) ?? -1;
  if (at < 0) return;
  idle!.splice(at, 1);
  if (!idle!.length) idleConnections.delete(origin);
}

/** A new connection to `origin` that connects to `target` (no second DNS query; TLS SNI and Host keep the host name). */
export function openConnection(origin: string, target: CheckedAddress): DestinationConnection {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as (err: null, addresses: CheckedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = new Client(origin, { connect: { lookup }, keepAliveTimeout: idleSocketMs, keepAliveMaxTimeout: idleSocketMs });
  const connection: DestinationConnection = {
    client,
    answered: 0,
    closed: false,
    close() {
      if (connection.closed) return;
      connection.closed = true;
      forget(origin, connection);
      client.destroy().catch(() => {});
    },
  };
  client.on('disconnect', connection.close);
  client.on('connectionError', connection.close);
  return connection;
}

/** An idle connection to `origin` if there is one, else a new one to `target`. */
export function takeConnection(origin: string, target: CheckedAddress): DestinationConnection {
  const connection = idleConnections.get(origin)?.at(-1);
  if (!connection) return openConnection(origin, target);
  forget(origin, connection);
  return connection;
}

/** Back to the idle connections after an answer read to its end; a closed one is dropped. */
export function giveBackConnection(origin: string, connection: DestinationConnection): void {
  if (connection.closed) return;
  const idle = idleConnections.get(origin);
  if (idle) idle.push(connection);
  else idleConnections.set(origin, [connection]);
}
