/** One API request as a test under faults records it: when it was sent and answered, and how. */
export interface TimedOutcome {
  method: string;
  /** When the request was sent, and when its answer (or failure) came. */
  at: number;
  answeredAt: number;
  ms: number;
  /** The HTTP status, or `error`: no answer (refused, reset, or none within 11 s: a hang). */
  status: number | 'error';
  retryAfter: string | null;
  body?: any;
  error?: string;
}

/** `method path` on `base` (…/api/v1) with `key`, and an Idempotency-Key when given; never throws. */
export async function timedCall(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  idempotencyKey?: string,
): Promise<TimedOutcome> {
  const at = Date.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
      // A request left unanswered for 10 s counts as hung.
      signal: AbortSignal.timeout(11_000),
    });
    const text = await res.text();
    const answeredAt = Date.now();
    const answer = { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? JSON.parse(text) : undefined };
    return { method, at, answeredAt, ms: answeredAt - at, ...answer };
  } catch (err) {
    const answeredAt = Date.now();
    return { method, at, answeredAt, ms: answeredAt - at, status: 'error', retryAfter: null, error: (err as Error).message };
  }
}
