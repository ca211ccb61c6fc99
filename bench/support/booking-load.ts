import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { addDays } from '../../src/lib/local-time.js';

/** A venue to book and the key that may book it. */
export interface BookingTarget {
  venueId: string;
  key: string;
}

export interface BookingLoad {
  /** The API's base URL (`http://127.0.0.1:3000`). */
  url: string;
  /** Each booking goes to one of these, at random. */
  targets: readonly BookingTarget[];
  connections: number;
  /** Seconds. */
  duration: number;
  /** The venues' local date today: bookings are for 1 to `days` days later, at random. */
  today: string;
  days: number;
  /** The times booked, at random. */
  times: readonly string[];
  /** Each booking with an Idempotency-Key of its own. */
  idempotent?: boolean;
  /** Keeps the id of every reservation created (each 201's body is read). */
  keepIds?: boolean;
  /** Every answer's status and when it arrived. */
  onAnswer?: (status: number, at: number) => void;
}

export interface BookingLoadResult {
  /** Bookings that succeeded (201). */
  created: number;
  /** The created reservations' ids, with keepIds. */
  ids: string[];
  /** The count of each status. */
  statusCounts: Record<string, number>;
  /** Median latency, ms. */
  p50: number;
  /** Connection errors and timeouts. */
  errors: number;
}

/** Quarter hours of lunch and dinner: what the benchmarks book unless they say otherwise. */
export const mealTimes = [12, 13, 19, 20, 21].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`));

const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];

/**
 * POST /reservations at `connections` for `duration` seconds, each request for a random target,
 * day and time, party of 2: the booking load of the benchmarks and of the PostgreSQL topology runs.
 */
export async function runBookingLoad(load: BookingLoad): Promise<BookingLoadResult> {
  const ids: string[] = [];
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.duration,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/reservations',
        setupRequest: (req) => {
          const target = pick(load.targets);
          return {
            ...req,
            headers: {
              authorization: `Bearer ${target.key}`,
              'content-type': 'application/json',
              ...(load.idempotent ? { 'idempotency-key': randomUUID() } : {}),
            },
            body: JSON.stringify({
              venueId: target.venueId,
              serviceDate: addDays(load.today, 1 + Math.floor(Math.random() * load.days)),
              time: pick(load.times),
              partySize: 2,
            }),
          };
        },
        onResponse: (status, body) => {
          load.onAnswer?.(status, Date.now());
          if (load.keepIds && status === 201) ids.push((JSON.parse(body) as { reservation: { id: string } }).reservation.id);
        },
      },
    ],
  });
  const statuses = result.statusCodeStats as unknown as Record<string, { count: number }>;
  const statusCounts = Object.fromEntries(Object.entries(statuses).map(([code, s]) => [code, s.count]));
  return { created: statusCounts['201'] ?? 0, ids, statusCounts, p50: result.latency.p50, errors: result.errors };
}
