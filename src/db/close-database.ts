import { closeConnections } from './client.js';
import { closeReadReplica } from './read-replica.js';

/** Ends every connection of this process (primary, session, replica) within `timeoutSeconds`. */
export async function closeDatabase(timeoutSeconds: number): Promise<void> {
  await Promise.all([closeConnections(timeoutSeconds), closeReadReplica(timeoutSeconds)]);
}
