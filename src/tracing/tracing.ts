/**
 * The project's view of tracing (docs/operations.md "Tracing"). Modules start spans, read the active
 * trace and carry it across queues through these functions only; they never import OpenTelemetry.
 * While tracing is off (the default) no tracer is installed and every function here is a check of
 * one variable: no OpenTelemetry module is loaded at all. When the environment turns tracing on, the
 * entry point loads the SDK (src/tracing/start-tracing.ts, a dynamic import) and installs its tracer
 * with useTracer before anything else runs.
 */

/** The W3C Trace Context headers of a span (`traceparent`, and `tracestate` when there is one): what crosses a queue or goes to a partner. */
export type TraceCarrier = Record<string, string>;

export type SpanKind = 'internal' | 'server' | 'client' | 'producer' | 'consumer';

export type SpanAttributes = Record<string, string | number | boolean | null | undefined>;

export interface SpanStart {
  kind?: SpanKind;
  /** Attributes given null or undefined are left out. */
  attributes?: SpanAttributes;
  /** The parent: undefined, the active span (if any); a carrier, that span (of another process); null, none (a trace of its own). */
  parent?: TraceCarrier | null;
  /** Spans of other traces this one follows from (a retry's attempt before). */
  links?: TraceCarrier[];
}

/** A started span; every method does nothing while tracing is off. */
export interface ActiveSpan {
  setAttributes(attributes: SpanAttributes): void;
  setName(name: string): void;
  /** Marks the span failed, with a one-line reason (never guest data). */
  fail(reason: string): void;
  end(): void;
  /** This span's W3C headers; empty while tracing is off. */
  carrier(): TraceCarrier;
}

/** The ids of the active span, as log lines and exemplars carry them. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** What start-tracing.ts installs: the OpenTelemetry SDK behind this module's functions. */
export interface Tracer {
  /** Runs `work` with a new span active; the span is not ended here. */
  enter<T>(name: string, start: SpanStart, work: (span: ActiveSpan) => T): T;
  /** A span of no duration, started and ended at once. */
  record(name: string, start: SpanStart): void;
  activeCarrier(): TraceCarrier | undefined;
  activeIds(): TraceIds | undefined;
  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void>;
}

const noSpan: ActiveSpan = {
  setAttributes: () => {},
  setName: () => {},
  fail: () => {},
  end: () => {},
  carrier: () => ({}),
};

let tracer: Tracer | undefined;

/** Installs the process's tracer (the entry point, once tracing is on), or removes it. */
export function useTracer(given: Tracer | undefined): void {
  tracer = given;
}

export function isTracing(): boolean {
  return tracer !== undefined;
}

/**
 * Runs `work` in a new span that the caller ends (a request's server span ends when its response is
 * written). `start` may be a function, called only while tracing is on.
 */
export function enterSpan<T>(name: string, start: SpanStart | (() => SpanStart), work: (span: ActiveSpan) => T): T {
  if (!tracer) return work(noSpan);
  return tracer.enter(name, typeof start === 'function' ? start() : start, work);
}

/** Runs `work` in a new span, ended when its promise settles (failed when it rejects). */
export function inSpan<T>(name: string, start: SpanStart, work: (span: ActiveSpan) => Promise<T>): Promise<T> {
  if (!tracer) return work(noSpan);
  return tracer.enter(name, start, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.fail(err instanceof Error ? err.name : 'error');
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span of no duration for something observed as it happens (a statement drizzle issues: see src/db/client.ts). */
export function recordSpan(name: string, start: SpanStart): void {
  tracer?.record(name, start);
}

/** The active span's W3C headers, to store with what another process continues (a job's data); undefined while off or outside a span. */
export function activeTraceCarrier(): TraceCarrier | undefined {
  return tracer?.activeCarrier();
}

/** The active span's ids (log lines, exemplars); undefined while off or outside a span. */
export function activeTraceIds(): TraceIds | undefined {
  return tracer?.activeIds();
}

/** Ends tracing in this process, its last spans exported. */
export async function stopTracing(): Promise<void> {
  const stopping = tracer;
  tracer = undefined;
  await stopping?.shutdown();
}

/**
 * The spans of the jobs this process is running, by queue and job id: what another job's producer
 * continues (the events job of an event is running while the event's deliveries are enqueued, in a
 * batch where the active span is another event's). Filled only while tracing is on.
 */
const runningJobSpans = new Map<string, ActiveSpan>();

/** Keeps the span, not its headers: most jobs' spans are never asked for (a delivery job's), and writing the headers costs. */
export function rememberJobSpan(queue: string, jobId: string, span: ActiveSpan): void {
  if (tracer) runningJobSpans.set(`${queue}:${jobId}`, span);
}
export function forgetJobSpan(queue: string, jobId: string): void {
  if (tracer) runningJobSpans.delete(`${queue}:${jobId}`);
}
/** The span of the job `jobId` of `queue` while this process runs it; undefined otherwise. */
export function runningJobSpan(queue: string, jobId: string): TraceCarrier | undefined {
  return tracer && runningJobSpans.get(`${queue}:${jobId}`)?.carrier();
}

/** The trace id in a `traceparent` (`00-<trace id>-<span id>-<flags>`); null for anything else. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(traceparent ?? '');
  return match ? match[1] : null;
}
