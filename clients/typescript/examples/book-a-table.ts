// Availability → booking → confirmation with @floorline/client.
// Run against a server: FLOORLINE_API_URL=http://127.0.0.1:3000/api/v1 FLOORLINE_API_KEY=gsk_… \
//   FLOORLINE_VENUE_ID=… npx tsx clients/typescript/examples/book-a-table.ts
import { fileURLToPath } from 'node:url';
import { createFloorlineClient, dataOrThrow, FloorlineApiError, idempotencyKey, type FloorlineClient } from '@floorline/client';

export interface TableRequest {
  venueId: string;
  serviceDate: string;
  time: string;
  partySize: number;
  guest: { firstName: string; lastName: string; phone: string };
}

/** Books the requested time, or the nearest alternative the API offers, and confirms the booking. */
export async function bookATable(client: FloorlineClient, request: TableRequest) {
  const { venueId, serviceDate, partySize } = request;
  const availability = await dataOrThrow(
    client.GET('/availability', { params: { query: { venueId, serviceDate, time: request.time, partySize } } }),
  );
  const time = availability.available ? request.time : availability.alternatives[0]?.time;
  if (time === undefined) throw new Error(`nothing free on ${serviceDate} for ${partySize}`);

  // The same Idempotency-Key on a retry (after a timeout, say) returns the first booking instead of a second one.
  const key = idempotencyKey();
  const { reservation } = await dataOrThrow(
    client.POST('/reservations', { params: { header: key }, body: { venueId, serviceDate, time, partySize, guest: request.guest } }),
  );

  // If-Match: confirm only the version just read; a concurrent change answers 409 conflict.
  const { reservation: confirmed } = await dataOrThrow(
    client.PATCH('/reservations/{id}', {
      params: { path: { id: reservation.id } },
      body: { status: 'confirmed' },
      headers: { 'If-Match': reservation.updatedAt },
    }),
  );
  return { reservation: confirmed, idempotencyKey: key };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const client = createFloorlineClient({
    baseUrl: process.env.FLOORLINE_API_URL ?? 'http://127.0.0.1:3000/api/v1',
    apiKey: process.env.FLOORLINE_API_KEY ?? '',
  });
  const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10);
  try {
    const { reservation } = await bookATable(client, {
      venueId: process.env.FLOORLINE_VENUE_ID ?? '',
      serviceDate: tomorrow,
      time: '20:00',
      partySize: 2,
      guest: { firstName: 'Ada', lastName: 'Lovelace', phone: '+390612345678' },
    });
    console.log(`booked ${reservation.id} at ${reservation.time} (${reservation.status})`);
  } catch (error) {
    // Typed errors: `code` is one of the contract's error codes.
    if (error instanceof FloorlineApiError)
      console.error(`${error.status} ${error.code ?? ''} (request ${error.requestId ?? '?'})`, error.body?.error.details);
    else throw error;
    process.exitCode = 1;
  }
}
