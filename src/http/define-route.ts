import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import { logger } from '../logger.js';
import { isStatementCancelled } from '../lib/connection-errors.js';
import { z } from 'zod';
import { canonicalJson, hashCanonical, nestsDeeperThan } from '../lib/canonical-json.js';
import { finishIdempotentRequest, startIdempotentRequest } from '../services/idempotency/idempotency-store.js';
import { hasScope, isPublishable, type AuthContext, type Scope } from '../core/auth-context.js';
import { checkWidgetOrigin } from './cors.js';
import { ApiError, type ErrorCode } from '../core/errors.js';
import { logUnexpected, renderError, sendRendered, toApiError, type RenderedResponse } from './error-handler.js';
import type { RequestGuards } from './request-guards.js';
import { parseOrThrow } from '../core/validation.js';
import { checkIdempotencyKey, type HttpMethod, type RouteResponses, type RouteResult } from '../core/route-definition.js';
import type { EventStreams } from '../services/events/event-stream.js';
import type { SigningSecretBox } from '../services/webhooks/signing-secrets.js';
import type { WebhookTargetSettings } from '../services/webhooks/post-webhook.js';
import type { DeliveryQueueSettings } from '../services/webhooks/enqueue-deliveries.js';

/** What the app gives every handler besides the request: the objects of this web process (src/http/app.ts). */
export interface RouteServices {
  /** The live event streams this process serves. */
  eventStreams: EventStreams;
  /** Key authentication, rate limit and failed-authentication throttle of this app. */
  guards: RequestGuards;
  /** Seals the secrets it hands out and opens those that sign a test webhook (POST /webhook-endpoints/test). */
  signingSecrets: SigningSecretBox;
  /** The key list cursors are sealed with (SECRETS_KEY's): handed to the list services with the query. */
  cursorKey: Buffer;
  /** Where webhooks may go (WEBHOOKS_ALLOW_PRIVATE_TARGETS), read per request: the addresses a body names, a test webhook. */
  webhookTargets: WebhookTargetSettings;
  /** The queue settings redeliveries and recoveries are enqueued with. */
  deliveryQueue: DeliveryQueueSettings;
}

export interface RouteContext<P, Q, B, A> {
  services: RouteServices;
  req: Request;
  res: Response;
  /** The request's logger: its lines carry the request id (pass it to the services that log). */
  log: Logger;
  auth: A;
  params: P;
  query: Q;
  body: B;
}

type AnyObject = z.ZodObject<z.ZodRawShape>;

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export interface RouteDefinition<PS, QS, BS, Public extends boolean> {
  method: HttpMethod;
  /** Express path relative to /api/v1, e.g. `/venues/:id`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** No API key needed (documentation endpoints). */
  public?: Public;
  scope?: Scope;
  /** Also open to publishable (widget) keys. */
  widget?: boolean;
  /** Refused to keys limited to certain venues. */
  organisationWide?: boolean;
  params?: PS;
  query?: QS;
  body?: BS;
  bodyLimit?: string;
  /** The handler reads `If-Match` (optimistic concurrency); the document declares the header. */
  ifMatch?: boolean;
  /** `manual`: the handler implements Idempotency-Key itself (imports replay the live record). */
  idempotency?: 'auto' | 'manual';
  /** The handler writes the response itself (streams). */
  raw?: boolean;
  successStatus?: number;
  responses?: RouteResponses;
  /**
   * Error codes this route can answer beyond those that follow from its definition (auth, scope,
   * params, query/body, idempotency, rate limit, 500/503: see errorCodesOf in openapi.ts).
   */
  errors?: readonly ErrorCode[];
  /** For the document: the operationId (default: derived from method and path) and examples. */
  operationId?: string;
  examples?: { request?: unknown; response?: unknown };
  handler: (
    ctx: RouteContext<Out<PS>, Out<QS>, Out<BS>, Public extends true ? AuthContext | undefined : AuthContext>,
  ) => Promise<RouteResult | void>;
}

export type AnyRoute = RouteDefinition<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined, boolean>;

export function defineRoute<
  PS extends AnyObject | undefined = undefined,
  QS extends AnyObject | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
  Public extends boolean = false,
>(def: RouteDefinition<PS, QS, BS, Public>): AnyRoute {
  return def as unknown as AnyRoute;
}

/** Where the API is mounted; route paths are relative to it. */
export const apiBasePath = '/api/v1';

/** Deeper bodies are refused before they are hashed for Idempotency-Key (docs/security.md "Limits"). */
const maxBodyDepth = 64;
const writeMethods = new Set<HttpMethod>(['post', 'put', 'patch', 'delete']);
const emptyBody = z.strictObject({});
const jsonParsers = new Map<string, RequestHandler>();

/** Reads the body after authentication, so that a bad key is told before a bad body. */
function readJsonBody(req: Request, res: Response, limit: string): Promise<void> {
  let parser = jsonParsers.get(limit);
  if (!parser) {
    // Every body is read as JSON whatever its Content-Type: anything else fails to parse and gets a 400.
    parser = express.json({ limit, type: () => true, strict: true });
    jsonParsers.set(limit, parser);
  }
  const parse = parser;
  return new Promise((resolve, reject) => parse(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
}

function strict(schema: z.ZodType | undefined): z.ZodType | undefined {
  return schema instanceof z.ZodObject ? schema.strict() : schema;
}

/** A single resource's ETag (its updatedAt) when the body is `{ <name>: { updatedAt, … } }`. */
function etagOf(body: Record<string, unknown>): string | undefined {
  let single: unknown;
  let count = 0;
  for (const name in body) {
    if (++count > 1) return undefined;
    single = body[name];
  }
  const updatedAt = single && typeof single === 'object' ? (single as { updatedAt?: unknown }).updatedAt : undefined;
  return typeof updatedAt === 'string' ? `"${updatedAt}"` : undefined;
}

function renderSuccess(result: RouteResult | void, def: AnyRoute, auth: AuthContext | undefined): RenderedResponse {
  const status = result?.status ?? def.successStatus ?? 200;
  let headers = result?.headers ?? {};
  const body = result?.body ?? {};
  if (def.method === 'get' && !headers.ETag) {
    const etag = etagOf(body);
    if (etag) headers = { ...headers, ETag: etag };
  }
  const payload = auth ? { ...body, livemode: auth.livemode } : body;
  return { status, headers, body: status === 204 ? '' : JSON.stringify(payload) };
}

/** What a handler is given. A class, not an object literal: a literal's `log` getter would be a new closure per request. */
class HandlerContext {
  private requestLog: Logger | undefined;

  constructor(
    readonly services: RouteServices,
    readonly req: Request,
    readonly res: Response,
    readonly auth: AuthContext | undefined,
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
  ) {}

  /** Made on first use: most requests log nothing but their closing line, which names its id itself. */
  get log(): Logger {
    return (this.requestLog ??= logger.child({ requestId: this.req.requestId }));
  }
}

/** The request's key, within its rate limit, allowed this operation (widget keys: the widget's routes, from their origins). */
async function authoriseRequest(def: AnyRoute, services: RouteServices, req: Request, res: Response): Promise<AuthContext> {
  const authenticated = services.guards.keys.authenticate(req);
  const auth = authenticated instanceof Promise ? await authenticated : authenticated;
  req.auth = auth;
  const limited = services.guards.rateLimiter.applyRateLimit(auth, req, res);
  if (limited) await limited;
  if (isPublishable(auth)) {
    if (!def.widget)
      throw new ApiError('forbidden', 'Publishable keys may only check availability and book.', { reason: 'publishable_key' });
    checkWidgetOrigin(auth, req, res);
    return auth;
  }
  if (def.scope && !hasScope(auth, def.scope)) {
    throw new ApiError('insufficient_scope', `This operation needs the scope ${def.scope}.`, { requiredScope: def.scope });
  }
  if (def.organisationWide && auth.venueIds !== null) {
    throw new ApiError('forbidden', 'This operation is organisation-wide; the key is limited to certain venues.', {
      reason: 'venue_limited_key',
    });
  }
  return auth;
}

/** Turns a definition into an Express handler: auth, rate limit, scope, validation, idempotency, response. */
export function toHandler(def: AnyRoute, services: RouteServices): RequestHandler {
  const paramsSchema = def.params;
  const querySchema = strict(def.query);
  const bodySchema = def.body ? strict(def.body) : writeMethods.has(def.method) ? emptyBody : undefined;

  async function execute(req: Request, res: Response, auth: AuthContext | undefined): Promise<RenderedResponse | null> {
    let params: unknown = {};
    if (paramsSchema) {
      const parsed = paramsSchema.safeParse(req.params);
      // A malformed path id is a resource that does not exist.
      if (!parsed.success) throw ApiError.notFound();
      params = parsed.data;
    }
    const query = querySchema ? parseOrThrow(querySchema, { ...(req.query as object) }, 'query') : {};
    const body = bodySchema ? parseOrThrow(bodySchema, req.body ?? {}, 'body') : undefined;
    const result = await def.handler(new HandlerContext(services, req, res, auth, params, query, body) as never);
    if (def.raw) return null;
    return renderSuccess(result, def, auth);
  }

  const pattern = `${apiBasePath}${def.path}`;
  const handle = async (req: Request, res: Response, signal: AbortSignal): Promise<void> => {
    req.routePattern = pattern;
    let auth: AuthContext | undefined;
    let rendered: RenderedResponse | null;
    try {
      // Public routes (documentation) answer everyone alike and ignore any key sent with them. The
      // request's own copy of the key's context carries its signal down to the transactions it opens.
      if (!def.public) auth = { ...(await authoriseRequest(def, services, req, res)), signal };
      // The body is read before the idempotency check, which hashes it.
      if (bodySchema) await readJsonBody(req, res, def.bodyLimit ?? '1mb');
      const idempotencyKey = req.headers['idempotency-key'];
      if (auth && writeMethods.has(def.method) && def.idempotency !== 'manual' && idempotencyKey !== undefined) {
        rendered = await runIdempotently(req, res, def, auth, String(idempotencyKey), () => execute(req, res, auth));
      } else {
        rendered = await execute(req, res, auth);
      }
    } catch (err) {
      // The cancellation of a request whose client left is what it asked for: no answer, no error line.
      if (res.destroyed && isStatementCancelled(err)) return;
      logUnexpected(err, req);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // req.auth: a key that authenticated and was then refused (scope, widget) still says its mode.
      rendered = renderError(toApiError(err), req.requestId, req.auth?.livemode);
    }
    if (rendered) sendRendered(res, rendered);
  };
  return (req, res) => cancelledIfClientLeaves(req, res, handle);
}

/**
 * Runs the handler with a signal that aborts when the client leaves before its answer is complete:
 * the request's transactions, which are given it (AuthContext.signal), then commit nothing and have
 * what they still run in PostgreSQL cancelled (docs/operations.md, "Statement timeout and clients that leave").
 */
function cancelledIfClientLeaves(
  req: Request,
  res: Response,
  handle: (req: Request, res: Response, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  const result = handle(req, res, controller.signal);
  const leave = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', leave);
  // A client that left while its body was being read is gone before this handler runs: its 'close'
  // was emitted already (seen under load: bookings of departed clients committed).
  if (req.socket?.destroyed) leave();
  return result;
}

async function runIdempotently(
  req: Request,
  res: Response,
  def: AnyRoute,
  auth: AuthContext,
  key: string,
  execute: () => Promise<RenderedResponse | null>,
): Promise<RenderedResponse | null> {
  checkIdempotencyKey(key);
  // No body of the API nests this deep; a deeper one would overflow the hashing's recursion.
  if (nestsDeeperThan(req.body, maxBodyDepth)) throw ApiError.invalid(['body'], `The body nests deeper than ${maxBodyDepth} levels.`);
  const operation = `${def.method.toUpperCase()} ${def.path} ${canonicalJson(req.params)}`;
  const start = await startIdempotentRequest({ apiKeyId: auth.keyId, key, operation, requestHash: hashCanonical(req.body ?? {}) });
  if (start.kind === 'replay') {
    res.setHeader('Idempotent-Replayed', 'true');
    // The body is replayed byte for byte, error.requestId included; the header must name the same request (docs/api.md "Requests").
    if (start.status >= 400) res.setHeader('X-Request-Id', (JSON.parse(start.body) as { error: { requestId: string } }).error.requestId);
    return { status: start.status, body: start.body, headers: {} };
  }
  let rendered: RenderedResponse;
  try {
    rendered = (await execute()) ?? { status: 500, body: '', headers: {} };
  } catch (err) {
    logUnexpected(err, req);
    rendered = renderError(toApiError(err), req.requestId, auth.livemode);
  }
  await finishIdempotentRequest(auth.keyId, key, rendered.status, rendered.body);
  return rendered;
}
