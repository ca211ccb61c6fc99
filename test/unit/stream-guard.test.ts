import { describe, expect, it } from 'vitest';
import { streamEndReason, type StreamGrant } from '../../src/services/events/stream-guard.js';

const grant: StreamGrant = { keyId: 'k', scopes: new Set(['events:read', 'guests:read']), venueIds: ['v1', 'v2'], openedAt: 0 };
const same = { revoked: false, scopes: ['guests:read', 'events:read'], venueIds: ['v2', 'v1'] };

describe('streamEndReason', () => {
  it.each([
    ['the key unchanged, within the lifetime', same, 999, null],
    ['the key revoked', { ...same, revoked: true }, 1, 'key_revoked'],
    ['the key gone', undefined, 1, 'key_revoked'],
    ['a scope removed', { ...same, scopes: ['events:read'] }, 1, 'key_changed'],
    ['a scope added', { ...same, scopes: [...same.scopes, 'reservations:read'] }, 1, 'key_changed'],
    ['a venue removed', { ...same, venueIds: ['v1'] }, 1, 'key_changed'],
    ['a venue swapped', { ...same, venueIds: ['v1', 'v3'] }, 1, 'key_changed'],
    ['opened to every venue', { ...same, venueIds: null }, 1, 'key_changed'],
    ['past the lifetime', same, 1000, 'max_lifetime'],
  ] as const)('%s', (_name, current, now, expected) => {
    expect(streamEndReason(grant, current, now, 1000)).toBe(expected);
  });

  it('a grant to every venue ends when the key is limited to some', () => {
    expect(streamEndReason({ ...grant, venueIds: null }, { ...same, venueIds: null }, 1, 1000)).toBe(null);
    expect(streamEndReason({ ...grant, venueIds: null }, same, 1, 1000)).toBe('key_changed');
  });
});
