import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/core/auth-context.js';
import { ApiError } from '../../src/core/errors.js';
import type { HoldRow } from '../../src/services/holds/hold-service.js';
import { checkMatchesHold, checkRequest, type CreateReservationInput } from '../../src/services/reservations/booking-request.js';

const keyOf = (kind: AuthContext['kind'], scopes: string[]): AuthContext => ({
  keyId: 'k',
  keyName: 'key',
  organisationId: 'o',
  kind,
  livemode: true,
  scopes: new Set(scopes),
  venueIds: null,
  allowedOrigins: [],
  rateLimitPerMinute: null,
  revoked: false,
});
const secret = keyOf('live', ['reservations:write']);
const floor = keyOf('live', ['reservations:write', 'floor:write']);
const widget = keyOf('publishable', []);
const booking: CreateReservationInput = { venueId: 'v', serviceDate: '2026-12-01', time: '20:00', partySize: 2 };
const guest = { phone: '+39 06 1234 5678', firstName: 'Ada' };

/** What checkRequest throws, as the error body names it: [code, fields or reason]; null when it passes. */
function refusal(auth: AuthContext, input: CreateReservationInput): [string, unknown] | null {
  try {
    checkRequest(auth, input, 0);
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return [err.code, err.details.fields ?? err.details.reason ?? err.details.requiredScope];
  }
}

describe('checkRequest: who may send what, which fields go together (before anything is read)', () => {
  it.each<[string, AuthContext, CreateReservationInput, [string, unknown] | null]>([
    ['a plain booking', secret, booking, null],
    ['a booking with a guest', secret, { ...booking, guest }, null],
    ['a widget booking with a guest', widget, { ...booking, guest }, null],
    [
      'a widget naming tables and a status',
      widget,
      { ...booking, tableId: 't', status: 'confirmed' },
      ['forbidden', ['tableId', 'status']],
    ],
    ['a widget forcing', widget, { ...booking, force: true }, ['forbidden', ['force']]],
    ['a table without floor:write', secret, { ...booking, tableId: 't' }, ['insufficient_scope', 'floor:write']],
    ['force without floor:write', secret, { ...booking, force: true }, ['insufficient_scope', 'floor:write']],
    ['a walk-in without floor:write', secret, { venueId: 'v', partySize: 2, source: 'walk_in' }, ['insufficient_scope', 'floor:write']],
    ['a walk-in with floor:write, no date or time', floor, { venueId: 'v', partySize: 2, source: 'walk_in' }, null],
    ['no date nor time', secret, { venueId: 'v', partySize: 2 }, ['invalid_request', ['serviceDate', 'time']]],
    ['no time', secret, { venueId: 'v', serviceDate: '2026-12-01', partySize: 2 }, ['invalid_request', ['time']]],
    ['a waiting-list party booked now: no date or time needed', secret, { venueId: 'v', partySize: 2, startNow: true }, null],
    [
      'a walk-in choosing its status',
      floor,
      { venueId: 'v', partySize: 2, source: 'walk_in', status: 'confirmed' },
      ['invalid_request', ['status']],
    ],
    ['a walk-in booking a hold', floor, { venueId: 'v', partySize: 2, source: 'walk_in', holdId: 'h' }, ['invalid_request', ['holdId']]],
    [
      'a table and a combination',
      floor,
      { ...booking, tableId: 't', tableCombinationId: 'c' },
      ['invalid_request', ['tableId', 'tableCombinationId']],
    ],
    ['a guest id and a guest', secret, { ...booking, guestId: 'g', guest }, ['invalid_request', ['guestId', 'guest']]],
    ['service tags without a guest', secret, { ...booking, serviceTags: ['vip'] }, ['invalid_request', ['serviceTags']]],
    ['service tags with a guest id', secret, { ...booking, guestId: 'g', serviceTags: ['vip'] }, null],
  ])('%s', (_, auth, input, expected) => {
    expect(refusal(auth, input)).toEqual(expected);
  });

  it('says what follows from the request: a walk-in and a waiting-list party start now, at the time given', () => {
    expect(checkRequest(floor, { venueId: 'v', partySize: 2, source: 'walk_in' }, 42)).toMatchObject({
      walkIn: true,
      startsNow: true,
      now: 42,
    });
    expect(checkRequest(secret, { venueId: 'v', partySize: 2, startNow: true }, 7)).toMatchObject({
      walkIn: false,
      startsNow: true,
      now: 7,
    });
    expect(checkRequest(secret, booking, 1)).toMatchObject({ walkIn: false, startsNow: false, now: 1 });
  });
});

describe('checkMatchesHold: a hold is booked as it was held, the fields that differ named', () => {
  const hold = {
    id: 'h',
    venueId: 'v',
    serviceDate: '2026-12-01',
    time: '20:00',
    partySize: 2,
    tableId: 't',
    tableCombinationId: null,
  } as unknown as HoldRow;
  it.each<[string, CreateReservationInput, string[] | null]>([
    ['the same slot', { ...booking, holdId: 'h' }, null],
    ['the same slot and its table', { ...booking, holdId: 'h', tableId: 't' }, null],
    ['another time and party', { ...booking, holdId: 'h', time: '20:15', partySize: 3 }, ['time', 'partySize']],
    ['another venue and day', { ...booking, holdId: 'h', venueId: 'w', serviceDate: '2026-12-02' }, ['venueId', 'serviceDate']],
    ['another table', { ...booking, holdId: 'h', tableId: 'u' }, ['tableId']],
    ['a combination the hold does not have', { ...booking, holdId: 'h', tableCombinationId: 'c' }, ['tableCombinationId']],
  ])('%s', (_, input, fields) => {
    let thrown: unknown = null;
    try {
      checkMatchesHold(input, hold);
    } catch (err) {
      thrown = err;
    }
    expect(thrown === null ? null : (thrown as ApiError).details.fields).toEqual(fields);
  });
});
