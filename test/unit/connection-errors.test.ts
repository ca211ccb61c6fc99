import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/lib/connection-errors.js';

const coded = (code: string) => Object.assign(new Error(code), { code });

describe('connection errors (503 in the API, postponed jobs in the workers)', () => {
  it.each([
    { what: 'refused', err: coded('ECONNREFUSED'), expected: true },
    { what: 'closed by the driver', err: coded('CONNECTION_CLOSED'), expected: true },
    { what: 'server shutting down', err: coded('57P01'), expected: true },
    { what: 'server starting up', err: coded('57P03'), expected: true },
    { what: 'wrapped by drizzle', err: new Error('Failed query', { cause: coded('CONNECTION_DESTROYED') }), expected: true },
    { what: 'among others', err: new AggregateError([new Error('x'), coded('ECONNRESET')]), expected: true },
    { what: 'a unique violation', err: coded('23505'), expected: false },
    { what: 'a serialisation failure', err: coded('40001'), expected: false },
    { what: 'a plain error', err: new Error('boom'), expected: false },
    { what: 'nothing', err: undefined, expected: false },
  ])('$what → $expected', ({ err, expected }) => {
    expect(isConnectionError(err)).toBe(expected);
  });
});
