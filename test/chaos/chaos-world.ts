// What the fault scenarios act on: a tenant with a configured venue, webhook destinations (real
// HTTP servers on 127.0.0.1), and clients that book through the real API.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, lt } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { createApiKey, createOrganisation } from '../../src/services/keys/key-service.js';
import { configureDemoVenue } from '../../src/services/venue-config/demo-venue.js';
import { createVenue } from '../../src/services/venues/venue-service.js';
import { isRunning, type RoleProcess } from './own-processes.js';

export interface ChaosTenant {
  organisationId: string;
  venueId: string;
  /** A live key with every scope and no practical rate limit. */
  key: string;
}

/** A live organisation with a demo venue of 40 tables bookable a year ahead. */
export async function createChaosTenant(): Promise<ChaosTenant> {
  const org = await createOrganisation(`Chaos ${randomUUID().slice(0, 8)}`, false);
  const venue = await createVenue(org.id, { name: 'Chaos venue', timezone: 'Europe/Rome', countryCode: 'IT', bookingHorizonDays: 400 });
  await configureDemoVenue(org.id, venue.id, { tableCount: 40 });
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'chaos', rateLimitPerMinute: 100_000_000 });
  return { organisationId: org.id, venueId: venue.id, key };
}

export interface Delivery {
  idempotencyKey: string;
  eventId: string;
  /** When the webhook arrived, and its lag after the event's commit (ms). */
  receivedAt: number;
  lagMs: number;
}

export interface Destination {
  url: string;
  received: Delivery[];
  /** Distinct idempotency keys received. */
  keys: () => Set<string>;
  /** Deliveries received beyond the first of each idempotency key. */
  duplicates: () => number;
  close: () => Promise<void>;
}

/** A webhook destination that answers 200 after `answerAfterMs` (a slow partner: past the 10 s limit). */
export async function startDestination(answerAfterMs = 0): Promise<Destination> {
  const received: Delivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { eventId: string; createdAt: string };
      received.push({
        idempotencyKey: String(req.headers['x-service-idempotency-key']),
        eventId: envelope.eventId,
        receivedAt,
        lagMs: receivedAt - Date.parse(envelope.createdAt),
      });
      if (!answerAfterMs) return void res.writeHead(200).end('ok');
      const timer = setTimeout(() => {
        timers.delete(timer);
        res.writeHead(200).end('ok');
      }, answerAfterMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const keys = () => new Set(received.map((d) => d.idempotencyKey));
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    keys,
    duplicates: () => received.length - keys().size,
    close: () =>
      new Promise((resolve) => {
        timers.forEach(clearTimeout);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ApiAnswer {
  /** The HTTP status, or the client-side failure: `reset` (the connection broke after the request was sent), `refused`, `timeout`. */
  status: number | 'reset' | 'refused' | 'timeout';
  body?: any;
  ms: number;
}

/** One API call; a failure is classified rather than thrown. */
export async function callApi(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 15_000,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  const began = Date.now();
  try {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, ms: Date.now() - began };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const status = e.name === 'TimeoutError' ? 'timeout' : e.cause?.code === 'ECONNREFUSED' ? 'refused' : 'reset';
    return { status, ms: Date.now() - began };
  }
}

/** A webhook endpoint of the venue and an automation sending its reservation_created events there. */
export async function routeBookingsTo(baseUrl: string, tenant: ChaosTenant, destinationUrl: string): Promise<{ automationId: string }> {
  const endpoint = await callApi(baseUrl, tenant.key, 'POST', '/webhook-endpoints', { venueId: tenant.venueId, url: destinationUrl });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint not created: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  const automation = await callApi(baseUrl, tenant.key, 'POST', '/automations', {
    venueId: tenant.venueId,
    name: `to ${destinationUrl}`,
    eventTypes: ['reservation_created'],
    action: { type: 'partner_notification', endpointId: endpoint.body.webhookEndpoint.id },
  });
  if (automation.status !== 201) throw new Error(`automation not created: ${automation.status} ${JSON.stringify(automation.body)}`);
  return { automationId: automation.body.automation.id };
}

const dinnerTimes = ['19:00', '19:15', '19:30', '19:45', '20:00', '20:15', '20:30', '20:45', '21:00', '21:15', '21:30', '21:45', '22:00'];

/** The n-th booking of a run: a party of two on its own day and time (a year of dinners), with a guest of its own. */
export function bookingBody(venueId: string, n: number) {
  const day = new Date(Date.now() + (2 + (n % 360)) * 24 * 3600_000).toISOString().slice(0, 10);
  return {
    venueId,
    serviceDate: day,
    time: dinnerTimes[Math.floor(n / 360) % dinnerTimes.length],
    partySize: 2,
    guest: { phone: `+39 347 ${String(1_000_000 + (n % 9_000_000)).slice(0, 7)}`, firstName: 'Chaos', lastName: `Guest ${n}` },
  };
}

export class Tally {
  readonly answers: ApiAnswer[] = [];

  add(answer: ApiAnswer): void {
    this.answers.push(answer);
  }

  /** `201: 140, 503: 3` */
  statuses(): string {
    const counts = new Map<string, number>();
    for (const a of this.answers) counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
  }

  count(accept: (status: ApiAnswer['status']) => boolean): number {
    return this.answers.filter((a) => accept(a.status)).length;
  }
}

/** Books at a steady rate until `until()` says stop; every answer goes to the tally. */
export async function bookSteadily(
  baseUrl: string,
  tenant: ChaosTenant,
  perSecond: number,
  until: () => boolean,
  tally: Tally,
  firstIndex = 0,
  options: { idempotent?: boolean } = {},
): Promise<number> {
  const calls: Promise<void>[] = [];
  let n = firstIndex;
  const began = Date.now();
  while (!until()) {
    const index = n++;
    // A generous limit: on a loaded machine a slow answer is not a lost one.
    const headers: Record<string, string> = options.idempotent ? { 'idempotency-key': randomUUID() } : {};
    calls.push(
      callApi(baseUrl, tenant.key, 'POST', '/reservations', bookingBody(tenant.venueId, index), 30_000, headers).then((a) => tally.add(a)),
    );
    const next = began + ((n - firstIndex) * 1000) / perSecond;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
  }
  await Promise.all(calls);
  return n;
}

/** The ids of the venue's reservation_created events committed so far (or before an instant). */
export async function committedEventIds(venueId: string, before?: Date): Promise<string[]> {
  const rows = await db()
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.venueId, venueId), eq(events.type, 'reservation_created'), before ? lt(events.createdAt, before) : undefined));
  return rows.map((r) => r.id);
}

/** The environment of the role processes of a scenario: its database, its own Redis, deliveries to 127.0.0.1 allowed. */
export function roleEnv(databaseUrl: string, redisUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: chaosQueuePrefix,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_ENV: 'development',
    SECRETS_KEY: 'chaos-secrets-key-0123456789',
    ADMIN_PASSWORD: 'chaos',
  };
}

export const chaosQueuePrefix = '{chaos}';

/**
 * Once the traffic has stopped: waits until every reservation_created event committed for the venue
 * has reached the destination, or the deadline (epoch ms); returns the committed event ids and how
 * many of them never arrived. The committed ids are read once and the arrivals counted as they come,
 * so that waiting for 10,000 webhooks costs the machine (and the figures) next to nothing.
 */
export async function awaitWebhooks(
  destination: Destination,
  venueId: string,
  deadline: number,
): Promise<{ committed: string[]; missing: number }> {
  const committed = await committedEventIds(venueId);
  const waiting = new Set(committed);
  let seen = 0;
  for (;;) {
    for (; seen < destination.received.length; seen++) waiting.delete(destination.received[seen].eventId);
    if (waiting.size === 0 || Date.now() > deadline) return { committed, missing: waiting.size };
    await sleep(250);
  }
}

/** The figures every scenario reports: its requests, and the webhooks of what they committed. */
export interface TrafficFigures {
  requests: number;
  /** `201: 140, 503: 3` */
  statuses: string;
  /** reservation_created events committed. */
  committed: number;
  /** Distinct idempotency keys the destination received, requests beyond the first of a key, committed events never received. */
  received: number;
  duplicates: number;
  missing: number;
  /** Role processes that exited during the run (none should). */
  exitedProcesses: number;
}

/** The traffic figures of a scenario from its tally, its destination, awaitWebhooks' answer and the processes that should still run. */
export function trafficFigures(
  tally: Tally,
  destination: Destination,
  webhooks: { committed: string[]; missing: number },
  processes: RoleProcess[],
): TrafficFigures {
  return {
    requests: tally.answers.length,
    statuses: tally.statuses(),
    committed: webhooks.committed.length,
    received: destination.keys().size,
    duplicates: destination.duplicates(),
    missing: webhooks.missing,
    exitedProcesses: processes.filter((p) => !isRunning(p.child)).length,
  };
}

export function describeTraffic(f: TrafficFigures): string {
  return `requests ${f.requests} (${f.statuses}) · events committed ${f.committed} · deliveries received ${f.received} distinct · duplicates ${f.duplicates} · missing ${f.missing}`;
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
