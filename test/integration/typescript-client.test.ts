import { describe, expect, it } from 'vitest';

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import {
  computeSignature,
  createFloorlineClient,
  dataOrThrow,
  FloorlineApiError,
  idempotencyKey,
  type WebhookEvent,
} from '@floorline/client';
import { documentFile, generateSchemaTypes, schemaFile } from '../../clients/typescript/scripts/generate-types.js';
import { formatOpenApi } from '../../src/emit-openapi.js';
import { bookATable } from '../../clients/typescript/examples/book-a-table.js';
import { createWebhookReceiver } from '../../clients/typescript/examples/receive-webhooks.js';
import { createTenant } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useWebhookPipeline } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: another test file's workers must not take these deliveries.
useOwnQueuePrefix('tc');

const pipeline = useWebhookPipeline();

/** The reservation a delivery carries: WebhookEvent is a union discriminated by `type`, so the switch types `data`. */
function reservationOf(event: WebhookEvent) {
  switch (event.type) {
    case 'waitlist_entry_created':
    case 'waitlist_entry_cancelled':
    case 'compatible_table_freed':
    case 'guest_profile_changed':
    case 'webhook_test':
      return undefined;
    default:
      return event.data.reservation;
  }
}

describe('the TypeScript client (clients/typescript)', () => {
  it('reads the current OpenAPI document: openapi.json is what `npm run openapi` writes from the routes today', async () => {
    const stale =
      'clients/typescript/openapi.json is stale: run `npm run openapi`, then `npm run generate -w @floorline/client`, and commit both';
    expect(await readFile(documentFile, 'utf8'), stale).toBe(formatOpenApi());
  });

  it('has the types of the current OpenAPI document: src/schema.d.ts is what the generator writes today', async () => {
    const stale = 'clients/typescript/src/schema.d.ts is stale: run `npm run generate -w @floorline/client` and commit it';
    expect(await readFile(schemaFile, 'utf8'), stale).toBe(await generateSchemaTypes());
  });

  it('typechecks, with its examples, under its own tsconfig (noUncheckedIndexedAccess)', async () => {
    const { stdout } = await promisify(execFile)('npx', ['tsc', '-p', 'clients/typescript'], { env: process.env }).catch(
      (error: { stdout: string }) => error,
    );
    expect(stdout).toBe('');
  });

  it('refuses at compile time what the document refuses (checked by npm run typecheck, never run)', () => {
    const client = createFloorlineClient({ baseUrl: 'http://127.0.0.1:1/api/v1', apiKey: 'gsk_unused' });
    const neverCalled = async (id: string) => {
      // @ts-expect-error PATCH does not cancel (docs/api.md): 'cancelled' is not in the status enum of its body
      await client.PATCH('/reservations/{id}', { params: { path: { id } }, body: { status: 'cancelled' } });
      const { reservation } = await dataOrThrow(client.GET('/reservations/{id}', { params: { path: { id } } }));
      // @ts-expect-error the answer is typed, not `any`: a Reservation has no `price`
      return reservation.price;
    };
    expect(neverCalled).toBeTypeOf('function');
  });

  it('books, moves the reservation through the service, lists it and verifies the webhooks, against the real server', async () => {
    const tenant = await createTenant();
    await configureVenue(tenant.venueId);
    const client = createFloorlineClient({ baseUrl: `${pipeline.url}/api/v1`, apiKey: tenant.key });

    // The partner's receiver of examples/receive-webhooks.ts, on real HTTP.
    const events: WebhookEvent[] = [];
    const secrets: string[] = [];
    const receiver = createWebhookReceiver({ secrets, onEvent: (event) => void events.push(event) });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    if (address === null || typeof address === 'string') throw new Error('the receiver listens on a TCP port');
    const receiverUrl = `http://127.0.0.1:${address.port}/floorline`;
    try {
      // Before the automation exists (no webhook): the same Idempotency-Key and body book once.
      const key = idempotencyKey();
      const once = { venueId: tenant.venueId, serviceDate: localDate(2), time: '19:00', partySize: 4 };
      const first = await dataOrThrow(client.POST('/reservations', { params: { header: key }, body: once }));
      const again = await dataOrThrow(client.POST('/reservations', { params: { header: key }, body: once }));
      expect(again.reservation.id).toBe(first.reservation.id);

      const { webhookEndpoint, secret } = await dataOrThrow(
        client.POST('/webhook-endpoints', { body: { venueId: tenant.venueId, url: receiverUrl } }),
      );
      secrets.push(secret);
      const eventTypes = ['reservation_created', 'reservation_confirmed', 'guest_arrived', 'guest_seated', 'meal_completed'] as const;
      await dataOrThrow(
        client.POST('/automations', {
          body: {
            venueId: tenant.venueId,
            name: 'Partner CRM',
            eventTypes: [...eventTypes],
            action: { type: 'partner_notification', endpointId: webhookEndpoint.id },
          },
        }),
      );

      // availability → booking (with an Idempotency-Key) → confirmation: the example itself.
      const serviceDate = localDate(1);
      const request = {
        venueId: tenant.venueId,
        serviceDate,
        time: '20:00',
        partySize: 2,
        guest: { firstName: 'Ada', lastName: 'Lovelace', phone: '+390612345678' },
      };
      const booked = await bookATable(client, request);
      expect(booked.reservation).toMatchObject({ venueId: tenant.venueId, serviceDate, time: '20:00', partySize: 2, status: 'confirmed' });
      const id = booked.reservation.id;

      // Status changes through the service, each guarded by the version just read.
      let current = booked.reservation;
      for (const status of ['arrived', 'seated', 'completed'] as const) {
        ({ reservation: current } = await dataOrThrow(
          client.PATCH('/reservations/{id}', { params: { path: { id } }, body: { status }, headers: { 'If-Match': current.updatedAt } }),
        ));
        expect(current.status).toBe(status);
      }

      // Typed errors: a stale version is a 409 conflict with the contract's error body.
      const stale = await dataOrThrow(
        client.PATCH('/reservations/{id}', {
          params: { path: { id } },
          body: { notes: 'too late' },
          headers: { 'If-Match': booked.reservation.updatedAt },
        }),
      ).catch((error: unknown) => error);
      expect(stale).toBeInstanceOf(FloorlineApiError);
      if (stale instanceof FloorlineApiError) {
        expect(stale.status).toBe(409);
        expect(stale.code).toBe('conflict');
        expect(stale.body?.error.requestId).toBe(stale.requestId);
      }

      // The list, filtered by status.
      const page = await dataOrThrow(
        client.GET('/reservations', {
          params: { query: { venueId: tenant.venueId, from: serviceDate, to: serviceDate, status: 'completed' } },
        }),
      );
      expect(page.data.map((r) => r.id)).toEqual([id]);
      expect(page.nextCursor).toBeNull();

      // One verified delivery per event of the automation, each carrying this reservation.
      await eventually(async () => events.length >= eventTypes.length, 20_000, 'the webhooks');
      expect(events.map((e) => e.type).sort()).toEqual([...eventTypes].sort());
      for (const event of events) {
        expect(event.venueId).toBe(tenant.venueId);
        expect(reservationOf(event)).toMatchObject({ id, venueId: tenant.venueId });
      }

      // Over the same HTTP: a replay of a processed delivery is acknowledged without being processed
      // again (step 5), and a body altered after signing is refused.
      const [delivered] = events;
      const body = JSON.stringify(delivered);
      const signed = (payload: string, timestamp = String(Math.floor(Date.now() / 1000))) => ({
        'content-type': 'application/json',
        'x-service-timestamp': timestamp,
        'x-service-idempotency-key': delivered.id,
        'x-service-signature': `v1=${computeSignature(secret, timestamp, delivered.id, payload)}`,
      });
      const replay = await fetch(receiverUrl, { method: 'POST', headers: signed(body), body });
      expect(replay.status).toBe(200);
      const tampered = await fetch(receiverUrl, { method: 'POST', headers: signed(body), body: body.replace(id, crypto.randomUUID()) });
      expect([tampered.status, await tampered.text()]).toEqual([400, 'signature_mismatch']);
      const old = await fetch(receiverUrl, { method: 'POST', headers: signed(body, String(Math.floor(Date.now() / 1000) - 301)), body });
      expect([old.status, await old.text()]).toEqual([400, 'timestamp_out_of_tolerance']);
      expect(events).toHaveLength(eventTypes.length);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
