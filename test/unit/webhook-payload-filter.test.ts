import { describe, expect, it } from 'vitest';
import { filterEnvelopeForReader } from '../../src/lib/webhook-payload-filter.js';

const reservation = {
  id: 'r1',
  partySize: 2,
  guestId: 'g1',
  guest: { name: 'Ada', allergies: 'nuts', allergens: ['nuts'] },
  guestDetails: { id: 'g1', phone: '+390000', name: 'Ada' },
};
const envelope = (data: Record<string, unknown>) => ({ id: 'automation:x:0', type: 't', data, automation: { name: 'a', runId: 'x' } });

describe('webhook payload filter', () => {
  it.each([
    {
      name: 'full access keeps everything',
      data: { reservation },
      reader: { guests: true, reservations: true },
      expected: { reservation },
    },
    {
      name: 'without guests:read the reservation guest is reduced to its id',
      data: { reservation },
      reader: { guests: false, reservations: true },
      expected: { reservation: { ...reservation, guest: { id: 'g1' }, guestDetails: { id: 'g1' } } },
    },
    {
      name: 'a reservation without guest stays without guest',
      data: { reservation: { ...reservation, guestId: null, guest: null, guestDetails: null } },
      reader: { guests: false, reservations: true },
      expected: { reservation: { ...reservation, guestId: null, guest: null, guestDetails: null } },
    },
    {
      name: 'without reservations:read the reservation is null',
      data: { reservation },
      reader: { guests: true, reservations: false },
      expected: { reservation: null },
    },
    {
      name: 'with neither the reservation is null',
      data: { reservation },
      reader: { guests: false, reservations: false },
      expected: { reservation: null },
    },
    {
      name: 'without guests:read a guest event keeps only the id',
      data: { guest: { id: 'g1', phone: '+39', name: 'Ada' }, reason: 'profile_changed' },
      reader: { guests: false, reservations: true },
      expected: { guest: { id: 'g1' }, reason: 'profile_changed' },
    },
    {
      name: 'without guests:read a waiting-list entry loses name and phone',
      data: { waitlistEntry: { id: 'w1', guestId: 'g1', name: 'Ada', phone: '+39', partySize: 2 } },
      reader: { guests: false, reservations: true },
      expected: { waitlistEntry: { id: 'w1', guestId: 'g1', name: null, phone: null, partySize: 2 } },
    },
    { name: 'an empty test event is unchanged', data: {}, reader: { guests: false, reservations: false }, expected: {} },
  ])('$name', ({ data, reader, expected }) => {
    const filtered = filterEnvelopeForReader(envelope(data), reader);
    expect(filtered).toEqual(envelope(expected));
  });

  it('does not change the envelope it reads', () => {
    const original = envelope({ reservation });
    filterEnvelopeForReader(original, { guests: false, reservations: false });
    expect(original.data.reservation).toBe(reservation);
  });
});
