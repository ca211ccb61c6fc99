import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/lib/connection-errors.js';

const coded = (code: string) => Object.assign(new Error(code), { code });
// As drizzle reports a failed statement: its own error, the driver's in `cause`.
const wrapped = (cause: Error) => new DrizzleQueryError('insert into "idempotency_keys" …', [], cause);

describe('connection errors (503 in the API, postponed jobs in the workers)', () => {
  const unavailable = [
    { what: 'refused', code: 'ECONNREFUSED' },
    { what: 'reset', code: 'ECONNRESET' },
    { what: 'closed by the driver', code: 'CONNECTION_CLOSED' },
    { what: 'destroyed by the driver (a read-only server refused by target_session_attrs)', code: 'CONNECTION_DESTROYED' },
    { what: 'connect timeout', code: 'CONNECT_TIMEOUT' },
    { what: 'server shutting down (admin)', code: '57P01' },
    { what: 'server crashed', code: '57P02' },
    { what: 'server starting up', code: '57P03' },
    { what: 'connection failure', code: '08006' },
    { what: 'a write on a read-only server', code: '25006' },
    { what: 'a commit whose outcome is unknown', code: '08007' },
  ];
  const available = [
    { what: 'a unique violation', code: '23505' },
    { what: 'a serialisation failure', code: '40001' },
    { what: 'a statement cancelled', code: '57014' },
    { what: 'a syntax error', code: '42601' },
  ];
  it.each([
    ...unavailable.map(({ what, code }) => ({ what: `${what}, bare`, err: coded(code) as unknown, expected: true })),
    ...unavailable.map(({ what, code }) => ({ what: `${what}, wrapped by drizzle`, err: wrapped(coded(code)), expected: true })),
    ...available.map(({ what, code }) => ({ what: `${what}, bare`, err: coded(code) as unknown, expected: false })),
    ...available.map(({ what, code }) => ({ what: `${what}, wrapped by drizzle`, err: wrapped(coded(code)), expected: false })),
    { what: 'the driver’s error two causes deep', err: new Error('outer', { cause: wrapped(coded('CONNECTION_CLOSED')) }), expected: true },
    { what: 'among others', err: new AggregateError([new Error('x'), coded('ECONNRESET')]), expected: true },
    { what: 'a plain error', err: new Error('boom'), expected: false },
    { what: 'a drizzle error without cause', err: new DrizzleQueryError('select 1', []), expected: false },
    { what: 'nothing', err: undefined, expected: false },
  ])('$what → $expected', ({ err, expected }) => {
    expect(isConnectionError(err)).toBe(expected);
  });
});
