/**
 * Versioned signing secrets and the rotation rules of docs/webhooks.md (3 to 5), without I/O.
 * The secret values are opaque here (plaintext or sealed alike).
 */
export interface SecretState<S> {
  current: S;
  /** The version that still signs until previousExpiresAt, if any. */
  previous: S | null;
  version: number;
  /** When the previous version stops signing; never null so that it can be shown as a date-time. */
  previousExpiresAt: Date;
}

export const defaultOverlapMinutes = 1440;
export const maxOverlapMinutes = 10080;

/** The state of a freshly created secret: version 1, no previous version. */
export function initialSecretState<S>(secret: S, now: Date): SecretState<S> {
  return { current: secret, previous: null, version: 1, previousExpiresAt: now };
}

export function isPreviousValid<S>(state: SecretState<S>, now: Date): boolean {
  return state.previous !== null && state.previousExpiresAt.getTime() > now.getTime();
}

/**
 * The next version. The version that keeps signing as "previous" is the current one, unless a
 * previous version is still valid: then that one stays (rule 4) and the intermediate version stops
 * signing. Its expiry becomes now + overlapMinutes; with 0 no previous version signs (rule 3).
 */
export function rotateSecretState<S>(state: SecretState<S>, newSecret: S, now: Date, overlapMinutes: number): SecretState<S> {
  if (!Number.isInteger(overlapMinutes) || overlapMinutes < 0 || overlapMinutes > maxOverlapMinutes) {
    throw new RangeError(`overlapMinutes must be an integer from 0 to ${maxOverlapMinutes}`);
  }
  const expiresAt = new Date(now.getTime() + overlapMinutes * 60_000);
  const keep = isPreviousValid(state, now) ? state.previous : state.current;
  return { current: newSecret, previous: overlapMinutes > 0 ? keep : null, version: state.version + 1, previousExpiresAt: expiresAt };
}

/** The secrets that sign at `now`, newest first. */
export function signingSecrets<S>(state: SecretState<S>, now: Date): S[] {
  return isPreviousValid(state, now) ? [state.current, state.previous as S] : [state.current];
}

/**
 * Rule 5: a rotation repeated with the same Idempotency-Key returns the secret it generated while
 * that secret is still the current version; once rotated again it may no longer be handed out.
 */
export function rotationReplayOutcome(generatedVersion: number, currentVersion: number): 'replay' | 'superseded' {
  return generatedVersion === currentVersion ? 'replay' : 'superseded';
}
