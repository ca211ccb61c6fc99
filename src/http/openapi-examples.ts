/**
 * Examples shown in the OpenAPI document for the main operations. A unit test checks each one
 * against the schema of its operation (test/unit/openapi-document.test.ts), so they cannot drift.
 */
const venueId = '5b0c8f5e-3a4d-4c2e-9a57-6f1de3b2a001';
const guestId = '9e7d2c41-8b3f-4a6e-b1d0-2c5f7a9e0002';
const tableId = '0f3a6b9c-2d4e-4f81-a7c3-5e8d1b2c0003';

export const exampleCreateReservation = {
  venueId,
  serviceDate: '2026-12-04',
  time: '20:00',
  partySize: 4,
  notes: 'Window table if possible',
  externalRef: 'crm-1042',
  guest: { phone: '+390612345678', firstName: 'Giulia', lastName: 'Rossi', allergens: ['nuts'] },
};

export const exampleReservation = {
  id: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d0004',
  venueId,
  serviceDate: '2026-12-04',
  time: '20:00',
  startsAt: '2026-12-04T19:00:00.000Z',
  endsAt: '2026-12-04T21:00:00.000Z',
  partySize: 4,
  status: 'created',
  tableAssigned: true,
  tableLocked: false,
  needsAttention: false,
  notes: 'Window table if possible',
  source: 'api',
  sourceDetail: 'Booking site',
  externalRef: 'crm-1042',
  guestId,
  updatedAt: '2026-11-23T18:30:12.345Z',
  guest: { name: 'Giulia Rossi', allergies: null, allergens: ['nuts'] },
  guestDetails: {
    id: guestId,
    phone: '+390612345678',
    email: null,
    firstName: 'Giulia',
    lastName: 'Rossi',
    name: 'Giulia Rossi',
    allergies: null,
    allergens: ['nuts'],
    notes: null,
    visitCount: 3,
    noShowCount: 0,
    externalRef: null,
    updatedAt: '2026-11-23T18:30:12.100Z',
  },
  table: { tableId, tableCombinationId: null, tables: [{ id: tableId, name: 'T4', minSeats: 2, maxSeats: 4 }] },
};

export const exampleAvailable = {
  venueId,
  serviceDate: '2026-12-04',
  partySize: 4,
  timezone: 'Europe/Rome',
  available: true,
  time: '20:00',
  startsAt: '2026-12-04T19:00:00.000Z',
  endsAt: '2026-12-04T21:00:00.000Z',
  turnTimeMinutes: 120,
  seats: 4,
  overflowsShift: false,
  reason: 'available',
  alternatives: [],
  livemode: true,
};

/** The envelope of a reservation event as a partner receives it. */
export function exampleReservationEnvelope(type: string) {
  return {
    id: 'automation:7d1e4c2a-9b3f-4e8d-a6c5-1f2e3d4c0005:0',
    eventId: '3a9c1e7f-5b2d-4c8e-9f0a-6d4b2c1e0006',
    type,
    createdAt: '2026-11-23T18:30:12.345Z',
    venueId,
    apiVersion: 'v1',
    data: { reservation: exampleReservation },
    automation: { name: 'Notify the CRM', runId: '7d1e4c2a-9b3f-4e8d-a6c5-1f2e3d4c0005' },
  };
}

export const exampleGuest = {
  id: guestId,
  venueId,
  phone: '+390612345678',
  name: 'Giulia Rossi',
  firstName: 'Giulia',
  lastName: 'Rossi',
  email: 'giulia@example.com',
  allergies: null,
  allergens: ['nuts'],
  notes: null,
  visitCount: 3,
  noShowCount: 0,
  cancelledCount: 1,
  lastVisitAt: '2026-10-02T21:40:00.000Z',
  consents: { marketingEmail: true, marketingSms: false },
  campaignTags: [],
  serviceTags: ['VIP'],
  externalRef: 'crm-77',
  createdAt: '2025-03-01T10:00:00.000Z',
  updatedAt: '2026-11-23T18:30:12.100Z',
  deletedAt: null,
};

export const exampleCreateGuest = {
  venueId,
  phone: '06 1234 5678',
  firstName: 'Giulia',
  lastName: 'Rossi',
  email: 'giulia@example.com',
  allergens: ['nuts'],
};

export const exampleCreateWebhookEndpoint = { venueId, url: 'https://partner.example.com/hooks/floorline' };

const dinnerShiftId = '3c9e1a7b-6d2f-4e80-9b14-7a2c5d8e0005';

export const exampleLearnedTurnTimes = {
  venueId,
  livemode: true,
  turnTimeSource: 'learned',
  cells: [
    {
      partySizeMin: 1,
      partySizeMax: 2,
      shiftId: dinnerShiftId,
      dayOfWeek: 5,
      samples: 64,
      p50Minutes: 84,
      p80Minutes: 101,
      borrowed: null,
    },
    {
      partySizeMin: 7,
      partySizeMax: null,
      shiftId: dinnerShiftId,
      dayOfWeek: 5,
      samples: 4,
      p50Minutes: 138,
      p80Minutes: 162,
      borrowed: 'all_days',
    },
  ],
};

export const exampleWaitQuotes = {
  venueId,
  livemode: true,
  quotes: [
    {
      partySize: 2,
      partiesAhead: 3,
      estimatedSeatTime: { from: '2026-12-04T19:17:00.000Z', to: '2026-12-04T19:37:00.000Z' },
      estimatedWaitMinutes: 25,
    },
    { partySize: 12, partiesAhead: 3, estimatedSeatTime: null, estimatedWaitMinutes: null, reason: 'after_last_seating' },
  ],
};
