import { describe, expect, it } from 'vitest';
import { markProcessState } from '../../src/core/process-state.js';
import { startMetricsServer } from '../../src/monitoring/metrics-server.js';
import { eq } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { reservations } from '../../src/db/schema/index.js';
import { client, createKey, createTenant, testConfig, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

// No METRICS_TOKEN (NODE_ENV is test, not development), the metrics port on loopback.
const config = testConfig({ METRICS_TOKEN: undefined, METRICS_HOST: '127.0.0.1' });
const server = useTestServer({ config });

describe('idempotency hashing of deep bodies (docs/security.md "Limits")', () => {
  it('a 100,000-deep body with an Idempotency-Key is a 400 naming the body, not a 500', async () => {
    const t = await createTenant();
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const api = client(server.url, t.key);
    for (const headers of [{ 'idempotency-key': 'deep-1' }, {}] as Array<Record<string, string>>) {
      const res = await api.request('POST', '/venues', { rawBody: deep, headers: { 'content-type': 'application/json', ...headers } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields).toEqual(['body']);
    }
    // A body of ordinary depth is still remembered under its key.
    const venue = { name: 'Deep end', timezone: 'Europe/Rome', countryCode: 'IT' };
    const first = await api.post('/venues', venue, { 'idempotency-key': 'deep-2' });
    const again = await api.post('/venues', venue, { 'idempotency-key': 'deep-2' });
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
  });
});

describe('metrics closed by default outside development (docs/security.md "Metrics")', () => {
  it('without METRICS_TOKEN, /metrics answers 401 on the API port and on the metrics port; /healthz stays open', async () => {
    const api = await fetch(`${server.url}/metrics`);
    expect(api.status).toBe(401);
    expect(await api.text()).toContain('set METRICS_TOKEN');
    // A process whose roles have started (its /healthz answers 503 `starting` before).
    markProcessState('serving');
    const metrics = await startMetricsServer(config, 0);
    try {
      // It says where it listens, truthfully: METRICS_HOST here.
      expect(metrics.url).toBe(`http://127.0.0.1:${metrics.port}`);
      expect((await fetch(`${metrics.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${metrics.url}/healthz`)).status).toBe(200);
    } finally {
      await metrics.close();
    }
  });
});

describe('widget bookings and known phones (docs/security.md "Widget bookings")', () => {
  it('a widget booking with a known phone attaches to that guest only under the guest’s own name; otherwise it is made without a guest', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId, { tables: Array.from({ length: 6 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })) });
    const origin = 'https://shop.example';
    const widget = client(server.url, await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: [origin] }));
    const staff = client(server.url, t.key);
    const ada = await staff.post('/guests', { venueId: t.venueId, phone: '347 555 0199', firstName: 'Ada', lastName: 'Lovelace' });
    expect(ada.status).toBe(201);
    const book = async (time: string, guest: Record<string, string>) => {
      const res = await widget.post(
        '/reservations',
        { venueId: t.venueId, serviceDate: localDate(2), time, partySize: 2, guest },
        { origin },
      );
      expect(res.status).toBe(201);
      const [row] = await db()
        .select({ guestId: reservations.guestId })
        .from(reservations)
        .where(eq(reservations.id, res.body.reservation.id));
      return row.guestId;
    };
    expect(await book('19:00', { phone: '+39 347 555 0199', firstName: 'Mallory', lastName: 'Lovelace' })).toBeNull();
    expect(await book('19:15', { phone: '+39 347 555 0199' })).toBeNull();
    expect(await book('19:30', { phone: '347 555 0199', firstName: ' ada ', lastName: 'LOVELACE' })).toBe(ada.body.guest.id);
    // A phone the venue does not know gets its guest, as any booking.
    const newcomer = await book('19:45', { phone: '347 555 0200', firstName: 'Grace', lastName: 'Hopper' });
    expect(newcomer).not.toBeNull();
    const history = await staff.get(`/reservations?guestId=${ada.body.guest.id}`);
    expect(history.body.data.map((r: { time: string }) => r.time)).toEqual(['19:30']);
  });

  it('a formula planted in a widget booking’s notes leaves the CSV export as text', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const origin = 'https://shop.example';
    const widget = client(server.url, await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: [origin] }));
    const day = localDate(2);
    const booked = await widget.post(
      '/reservations',
      { venueId: t.venueId, serviceDate: day, time: '20:00', partySize: 2, notes: "=cmd|' /C calc'!A0", guest: { phone: '347 555 0300' } },
      { origin },
    );
    expect(booked.status).toBe(201);
    const csv = await client(server.url, t.key).get(`/exports/reservations?venueId=${t.venueId}&from=${day}&to=${day}&format=csv`);
    expect(csv.text).toContain(`"'=cmd|' /C calc'!A0"`);
    expect(csv.text).not.toMatch(/(^|,)=cmd/m);
  });
});
