import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { ActiveSpan, SpanAttributes, SpanKind, SpanStart, TraceCarrier, Tracer } from './tracing.js';

// Loaded only when tracing is on (src/roles/start-process.ts imports it dynamically): the one module
// of the project that imports OpenTelemetry.

const kinds: Record<SpanKind, OtelSpanKind> = {
  internal: OtelSpanKind.INTERNAL,
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  producer: OtelSpanKind.PRODUCER,
  consumer: OtelSpanKind.CONSUMER,
};

// Attributes given null or undefined need no filtering here: the SDK copies a span's attributes
// and leaves those out itself.
const attributesOf = (given: SpanAttributes | undefined) => given as Attributes | undefined;

const getter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => carrier[key],
};

/** The context of a carrier's span (the configured propagator: W3C Trace Context by default). */
function contextOf(carrier: TraceCarrier, base: Context = ROOT_CONTEXT): Context {
  return propagation.extract(base, carrier, getter);
}

function carrierOf(ctx: Context): TraceCarrier {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** A link to the span of a carrier; none when it holds no valid span context. */
function linkOf(carrier: TraceCarrier): Link | null {
  const spanContext = trace.getSpanContext(contextOf(carrier));
  return spanContext && trace.isSpanContextValid(spanContext) ? { context: spanContext } : null;
}

/** A started span: one object per span, its methods shared. */
class StartedSpan implements ActiveSpan {
  constructor(
    private readonly span: Span,
    private readonly ctx: Context,
  ) {}
  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributesOf(attributes)!);
  }
  setName(name: string): void {
    this.span.updateName(name);
  }
  fail(reason: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  end(): void {
    this.span.end();
  }
  carrier(): TraceCarrier {
    return carrierOf(this.ctx);
  }
}

/** The links of a span start: none for most spans, without a list made for them. */
function linksOf(start: SpanStart): Link[] | undefined {
  if (!start.links?.length) return undefined;
  return start.links.map(linkOf).filter((link) => link !== null);
}

function optionsOf(start: SpanStart): SpanOptions {
  return { kind: kinds[start.kind ?? 'internal'], attributes: attributesOf(start.attributes), links: linksOf(start) };
}

function parentOf(start: SpanStart): Context {
  return start.parent === undefined ? context.active() : start.parent === null ? ROOT_CONTEXT : contextOf(start.parent);
}

function createTracer(sdk: NodeSDK): Tracer {
  const otel = trace.getTracer('floorline');
  return {
    enter(name, start: SpanStart, work) {
      const parent = parentOf(start);
      const span = otel.startSpan(name, optionsOf(start), parent);
      const ctx = trace.setSpan(parent, span);
      return context.with(ctx, () => work(new StartedSpan(span, ctx)));
    },
    record(name, start: SpanStart) {
      // Nothing runs inside an instant: no context is made for it.
      otel.startSpan(name, optionsOf(start), parentOf(start)).end();
    },
    activeCarrier() {
      const ctx = context.active();
      return trace.getSpan(ctx) ? carrierOf(ctx) : undefined;
    },
    activeIds() {
      const spanContext = trace.getActiveSpan()?.spanContext();
      return spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : undefined;
    },
    shutdown: () => sdk.shutdown(),
  };
}

export interface TracingSettings {
  /** service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one. */
  serviceName: string | undefined;
}

/**
 * Starts the OpenTelemetry SDK for this process and returns its tracer. The SDK reads the standard
 * variables itself (OTEL_EXPORTER_OTLP_*: endpoint, protocol http/protobuf or http/json, headers;
 * OTEL_TRACES_SAMPLER(_ARG); OTEL_RESOURCE_ATTRIBUTES; OTEL_PROPAGATORS; OTEL_BSP_*). Traces only:
 * the platform's metrics are Prometheus's (/metrics) and its logs go to stdout, so no metric reader
 * or log processor is started whatever OTEL_METRICS_EXPORTER and OTEL_LOGS_EXPORTER say.
 */
export function startTracing(settings: TracingSettings): Tracer {
  const sdk = new NodeSDK({ serviceName: settings.serviceName, metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  return createTracer(sdk);
}
