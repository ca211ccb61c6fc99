/**
 * What this process is doing, as its health endpoints tell it (docs/operations.md "Stopping without
 * resets"): `starting` until every role it runs has started, `serving` then, `stopping` from the
 * stop signal on. One process runs one set of roles, so the state is the process's own.
 */
export type ProcessState = 'starting' | 'serving' | 'stopping';

let state: ProcessState = 'starting';

export function processState(): ProcessState {
  return state;
}

/** Moves forward only: a process that began stopping never serves again. */
export function markProcessState(next: Exclude<ProcessState, 'starting'>): void {
  if (state !== 'stopping') state = next;
}
