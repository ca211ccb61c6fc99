import { describe, expect, it } from 'vitest';
import {
  initialSecretState,
  rotateSecretState,
  rotationReplayOutcome,
  signingSecrets,
  type SecretState,
} from '../../src/lib/secret-rotation.js';

const t0 = new Date('2030-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

describe('secret rotation', () => {
  const fresh = initialSecretState('s1', t0);

  it('starts at version 1 with no previous version', () => {
    expect(fresh).toEqual({ current: 's1', previous: null, version: 1, previousExpiresAt: t0 });
    expect(signingSecrets(fresh, t0)).toEqual(['s1']);
  });

  interface Case {
    name: string;
    steps: Array<{ secret: string; at: number; overlap: number }>;
    expected: SecretState<string>;
    signing: Array<{ at: number; secrets: string[] }>;
  }
  const cases: Case[] = [
    {
      name: 'an overlap keeps the old version signing until it expires (rule 3)',
      steps: [{ secret: 's2', at: 0, overlap: 1440 }],
      expected: { current: 's2', previous: 's1', version: 2, previousExpiresAt: at(1440) },
      signing: [
        { at: 0, secrets: ['s2', 's1'] },
        { at: 1439, secrets: ['s2', 's1'] },
        { at: 1440, secrets: ['s2'] },
      ],
    },
    {
      name: 'overlap 0 stops the old version at once (rule 3)',
      steps: [{ secret: 's2', at: 0, overlap: 0 }],
      expected: { current: 's2', previous: null, version: 2, previousExpiresAt: at(0) },
      signing: [{ at: 0, secrets: ['s2'] }],
    },
    {
      name: 'a rotation during an overlap keeps the first previous version and drops the intermediate one (rule 4)',
      steps: [
        { secret: 's2', at: 0, overlap: 60 },
        { secret: 's3', at: 30, overlap: 120 },
      ],
      expected: { current: 's3', previous: 's1', version: 3, previousExpiresAt: at(150) },
      signing: [
        { at: 30, secrets: ['s3', 's1'] },
        { at: 149, secrets: ['s3', 's1'] },
        { at: 150, secrets: ['s3'] },
      ],
    },
    {
      name: 'a rotation during an overlap with 0 ends the overlap',
      steps: [
        { secret: 's2', at: 0, overlap: 60 },
        { secret: 's3', at: 30, overlap: 0 },
      ],
      expected: { current: 's3', previous: null, version: 3, previousExpiresAt: at(30) },
      signing: [{ at: 30, secrets: ['s3'] }],
    },
    {
      name: 'a rotation after the overlap ended makes the current version the previous one',
      steps: [
        { secret: 's2', at: 0, overlap: 60 },
        { secret: 's3', at: 61, overlap: 10 },
      ],
      expected: { current: 's3', previous: 's2', version: 3, previousExpiresAt: at(71) },
      signing: [{ at: 61, secrets: ['s3', 's2'] }],
    },
    {
      name: 'the maximum overlap is one week',
      steps: [{ secret: 's2', at: 0, overlap: 10080 }],
      expected: { current: 's2', previous: 's1', version: 2, previousExpiresAt: at(10080) },
      signing: [{ at: 10079, secrets: ['s2', 's1'] }],
    },
  ];

  it.each(cases)('$name', ({ steps, expected, signing }) => {
    let state = fresh;
    for (const step of steps) state = rotateSecretState(state, step.secret, at(step.at), step.overlap);
    expect(state).toEqual(expected);
    for (const s of signing) expect(signingSecrets(state, at(s.at))).toEqual(s.secrets);
  });

  it.each([-1, 10081, 1.5, Number.NaN])('refuses overlapMinutes %s', (overlap) => {
    expect(() => rotateSecretState(fresh, 's2', t0, overlap)).toThrow(RangeError);
  });

  it.each([
    { generated: 2, current: 2, outcome: 'replay' },
    { generated: 2, current: 3, outcome: 'superseded' },
  ] as const)('a replay of version $generated when $current is current: $outcome (rule 5)', ({ generated, current, outcome }) => {
    expect(rotationReplayOutcome(generated, current)).toBe(outcome);
  });
});
