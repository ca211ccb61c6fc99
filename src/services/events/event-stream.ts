import type { ServerResponse } from 'node:http';
import { and, asc, eq, getTableColumns, gt } from 'drizzle-orm';
import { db, sessionSql } from '../../db/client.js';
import { eventPositions, events } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Config } from '../../config.js';
import type { PayloadReader } from '../../lib/webhook-payload-filter.js';
import { logger } from '../../logger.js';
import { findKeyStates } from '../keys/key-service.js';
import { getVisibleVenue } from '../venues/venue-service.js';
import { eventJson, payloadReaderOf } from './event-service.js';
import { grantOf, streamEndReason, type StreamGrant } from './stream-guard.js';
import { eventStreamChannel, lastPosition, sequenceEvents } from '../outbox/event-sequencer.js';

/** A published event with its stream position. */
type EventRow = typeof events.$inferSelect & { position: number };

/** docs/webhooks.md "Live event stream": a comment line every 15 s keeps proxies and clients from timing out an idle stream. */
export const keepAliveMs = 15_000;
/** Events read per query, for a feed and for a client catching up. */
const pageSize = 500;
/** A client that lets this much pile up unread is cut off; it resumes with Last-Event-ID, missing nothing. */
const maxUnsentBytes = 1 << 20;
/** After a failed read (PostgreSQL unreachable), a feed tries again after this long. */
const retryReadMs = 1000;

interface StreamClient {
  organisationId: string;
  /** The venues the client asked for, else those of a limited key; null: every venue of the organisation. */
  venueIds: ReadonlySet<string> | null;
  res: ServerResponse;
  /** The position of the last event sent or passed over: the client's cursor. */
  position: number;
  /** Caught up: the feed's events go straight out; before that they wait in `backlog`. */
  live: boolean;
  backlog: EventRow[];
  /** What its key granted at the opening; the stream ends when that changes (streamEndReason). */
  grant: StreamGrant;
  /** Guest data of the events reduced by the key's scopes, as in webhook payloads. */
  reader: PayloadReader;
}

/** An organisation's events after `position`, in position order (a page): the stream's one read of history. */
export function selectEventsAfter(organisationId: string, position: number) {
  return db()
    .select({ ...getTableColumns(events), position: eventPositions.position })
    .from(eventPositions)
    .innerJoin(events, eq(events.id, eventPositions.eventId))
    .where(and(eq(eventPositions.organisationId, organisationId), gt(eventPositions.position, position)))
    .orderBy(asc(eventPositions.position))
    .limit(pageSize);
}

function isGone(res: ServerResponse): boolean {
  return res.writableEnded || res.destroyed;
}

function frame(event: EventRow, reader: PayloadReader): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(eventJson(event, reader))}\n\n`;
}

/**
 * One organisation's events as this process reads them: on each notification one query fetches
 * what was committed after `position`, for all of the organisation's clients on this process.
 */
class OrganisationFeed {
  readonly clients = new Set<StreamClient>();
  private reading = false;
  private again = false;

  constructor(
    private readonly streams: EventStreams,
    readonly organisationId: string,
    public position: number,
  ) {}

  pull(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readNew().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.pull();
      }
    });
  }

  private async readNew(): Promise<void> {
    try {
      for (;;) {
        const rows = await selectEventsAfter(this.organisationId, this.position);
        for (const row of rows) {
          this.position = row.position;
          for (const client of this.clients) this.streams.offer(client, row);
        }
        if (rows.length < pageSize) return;
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message, organisationId: this.organisationId }, 'event stream read failed; retrying');
      setTimeout(() => this.pull(), retryReadMs).unref();
    }
  }
}

/**
 * The live event streams of this web process (docs/webhooks.md "Live event stream"): one LISTEN connection, one feed per
 * organisation with clients here, one keep-alive timer for all. `closeAll` ends every stream (the
 * web role's stop).
 */
export class EventStreams {
  /** STREAMS_PER_KEY, STREAM_MAX_LIFETIME_SECONDS and STREAM_KEY_RECHECK_MS of the process. */
  constructor(private readonly limits: Pick<Config, 'STREAMS_PER_KEY' | 'STREAM_MAX_LIFETIME_SECONDS' | 'STREAM_KEY_RECHECK_MS'>) {}

  private readonly feeds = new Map<string, OrganisationFeed>();
  private readonly clients = new Set<StreamClient>();
  private listening: Promise<{ unlisten: () => Promise<void> }> | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  private keyCheck: NodeJS.Timeout | null = null;

  get size(): number {
    return this.clients.size;
  }

  /** Starts the LISTEN on first use; on every (re)connect all feeds read what they may have missed. */
  private listen(): Promise<unknown> {
    // The connection and the feeds' reads serve every client, whichever request opened them.
    this.listening ??= sessionSql().listen(
      eventStreamChannel,
      (organisationId) => this.feeds.get(organisationId)?.pull(),
      () => {
        for (const feed of this.feeds.values()) feed.pull();
      },
    );
    this.listening.catch(() => (this.listening = null));
    return this.listening;
  }

  private async feedOf(organisationId: string): Promise<OrganisationFeed> {
    const existing = this.feeds.get(organisationId);
    if (existing) return existing;
    const position = await lastPosition(organisationId);
    // Another client of the organisation may have made it meanwhile.
    const feed = this.feeds.get(organisationId) ?? new OrganisationFeed(this, organisationId, position);
    this.feeds.set(organisationId, feed);
    return feed;
  }

  /**
   * Opens a stream on `res`: headers, then the events after `after` (an event id) or from now,
   * then live events. Nothing is missed between the catch-up and live: the client joins its feed
   * before reading, keeps what the feed offers meanwhile, and drops what it already sent.
   */
  async open(
    auth: AuthContext,
    options: { venueIds: string[]; after?: { id: string; field: string } },
    res: ServerResponse,
  ): Promise<void> {
    for (const venueId of options.venueIds) await getVisibleVenue(auth, venueId);
    const start = options.after ? await positionOf(auth.organisationId, options.after) : undefined;
    await this.listen();
    const feed = await this.feedOf(auth.organisationId);
    const venueIds = options.venueIds.length ? options.venueIds : auth.venueIds;
    // Checked and counted in one synchronous step with the registration below: concurrent openings cannot overshoot.
    let open = 0;
    for (const c of this.clients) if (c.grant.keyId === auth.keyId) open++;
    if (open >= this.limits.STREAMS_PER_KEY) {
      throw new ApiError(
        'rate_limited',
        `This key already has ${open} live streams open here (at most ${this.limits.STREAMS_PER_KEY}).`,
        {},
        { 'Retry-After': '5' },
      );
    }
    const client: StreamClient = {
      organisationId: auth.organisationId,
      venueIds: venueIds ? new Set(venueIds) : null,
      res,
      position: start ?? feed.position,
      live: false,
      backlog: [],
      grant: grantOf(auth, Date.now()),
      reader: payloadReaderOf(auth),
    };
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 1000\n\n');
    res.req.socket.setTimeout(0);
    res.on('close', () => this.remove(client));
    feed.clients.add(client);
    this.feeds.set(client.organisationId, feed);
    this.clients.add(client);
    this.startKeepAlive();
    for (;;) {
      const rows = await selectEventsAfter(client.organisationId, client.position);
      for (const row of rows) this.send(client, row);
      if (rows.length < pageSize || isGone(res)) break;
    }
    for (const row of client.backlog) if (row.position > client.position) this.send(client, row);
    client.backlog = [];
    client.live = true;
  }

  offer(client: StreamClient, event: EventRow): void {
    // A feed that started behind a client's catch-up (events are numbered just after their commit, so a
    // new feed's starting position can trail what the client already read) offers it events it has sent.
    if (client.live) {
      if (event.position > client.position) this.send(client, event);
    } else client.backlog.push(event);
  }

  private send(client: StreamClient, event: EventRow): void {
    if (isGone(client.res)) return;
    client.position = event.position;
    if (client.venueIds && !client.venueIds.has(event.venueId)) return;
    if (client.res.writableLength > maxUnsentBytes) {
      logger.warn({ organisationId: client.organisationId }, 'event stream client too slow; closing it (it resumes with Last-Event-ID)');
      client.res.end();
      return;
    }
    client.res.write(frame(event, client.reader));
  }

  private remove(client: StreamClient): void {
    this.clients.delete(client);
    const feed = this.feeds.get(client.organisationId);
    if (!feed) return;
    feed.clients.delete(client);
    if (!feed.clients.size) this.feeds.delete(client.organisationId);
    if (!this.clients.size) this.stopKeepAlive();
  }

  private startKeepAlive(): void {
    this.keepAlive ??= setInterval(() => {
      for (const client of this.clients) if (!isGone(client.res)) client.res.write(': keep-alive\n\n');
    }, keepAliveMs).unref();
    this.keyCheck ??= setInterval(() => void this.checkKeys(), this.limits.STREAM_KEY_RECHECK_MS).unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (this.keyCheck) clearInterval(this.keyCheck);
    this.keepAlive = null;
    this.keyCheck = null;
  }

  /**
   * Ends the streams whose key was revoked or changed, and those past their lifetime, within
   * STREAM_KEY_RECHECK_MS (docs/security.md "Live streams"): a stream is authorised once, at its
   * opening, so what changes afterwards is looked up here, one query for every key with a stream.
   */
  private async checkKeys(): Promise<void> {
    const clients = [...this.clients];
    let states;
    try {
      states = await findKeyStates([...new Set(clients.map((c) => c.grant.keyId))]);
    } catch (err) {
      // Kept open meanwhile: the lifetime still bounds them, and the next check tries again.
      logger.warn({ err: (err as Error).message }, 'event stream key check failed; retrying');
      return;
    }
    const now = Date.now();
    const maxLifetimeMs = this.limits.STREAM_MAX_LIFETIME_SECONDS * 1000;
    for (const client of clients) {
      const reason = streamEndReason(client.grant, states.get(client.grant.keyId), now, maxLifetimeMs);
      if (!reason || isGone(client.res)) continue;
      logger.info({ keyId: client.grant.keyId, reason }, 'event stream ended');
      client.res.end(`: closed: ${reason}\n\n`);
      this.remove(client);
    }
  }

  /** Ends every open stream and the LISTEN: the web role's stop (clients reconnect elsewhere with Last-Event-ID). */
  async closeAll(): Promise<void> {
    for (const client of [...this.clients]) {
      client.res.end();
      this.remove(client);
    }
    this.stopKeepAlive();
    const listening = this.listening;
    this.listening = null;
    if (listening) await listening.then((l) => l.unlisten()).catch(() => {});
  }
}

/**
 * The position of the event a client resumes after: an event of its organisation, else 400 naming the
 * field it came in. An event listed by GET /events a moment after its commit may not be numbered yet:
 * it is numbered first.
 */
async function positionOf(organisationId: string, after: { id: string; field: string }): Promise<number> {
  const find = () =>
    db()
      .select({ position: eventPositions.position, published: events.published })
      .from(events)
      .leftJoin(eventPositions, eq(eventPositions.eventId, events.id))
      .where(and(eq(events.id, after.id), eq(events.organisationId, organisationId)));
  let [row] = await find();
  // Numbered here, or by the run that holds the organisation's lock within moments.
  for (let attempt = 0; row?.published && row.position === null && attempt < 20; attempt++) {
    if (!(await sequenceEvents(organisationId))) await new Promise((resolve) => setTimeout(resolve, 50));
    [row] = await find();
  }
  if (!row?.published || row.position === null)
    throw ApiError.invalid([after.field], `${after.field} names no event of this organisation.`);
  return row.position;
}
