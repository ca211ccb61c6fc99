import { setImmediate as nextTurn } from 'node:timers/promises';
import { closeConnections } from './client.js';
import { closeReadReplica } from './read-replica.js';

/**
 * Ends every connection of this process (primary, session, replica) within `timeoutSeconds`.
 *
 * The driver (postgres.js 3.4.9) reads the server's array types on each new connection in a promise
 * that nothing of its own awaits: a connection still opening when its pool is ended (PostgreSQL not
 * answering at a stop) rejects that promise with CONNECTION_DESTROYED, unhandled, and Node ended the
 * drained process with an uncaught exception (exit code 1) instead of its 0. While the pools end,
 * that error is expected and let go; any other unhandled rejection is thrown, as Node throws it.
 */
export async function closeDatabase(timeoutSeconds: number): Promise<void> {
  process.on('unhandledRejection', letDestroyedConnectionsGo);
  try {
    await Promise.all([closeConnections(timeoutSeconds), closeReadReplica(timeoutSeconds)]);
    // The rejections of the end are reported after the turn it finished in.
    await nextTurn();
  } finally {
    process.off('unhandledRejection', letDestroyedConnectionsGo);
  }
}

function letDestroyedConnectionsGo(reason: unknown): void {
  if ((reason as { code?: unknown } | null)?.code !== 'CONNECTION_DESTROYED') throw reason;
}
