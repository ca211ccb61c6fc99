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

function attributesOf(given: SpanAttributes | undefined): Attributes {
  const attributes: Attributes = {};
  for (const [key, value] of Object.entries(given ?? {})) if (value !== null && value !== undefined) attributes[key] = value;
  return attributes;
}

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

function wrap(span: Span, ctx: Context): ActiveSpan {
  return {
    setAttributes: (attributes) => void span.setAttributes(attributesOf(attributes)),
    setName: (name) => void span.updateName(name),
    fail: (reason) => void span.setStatus({ code: SpanStatusCode.ERROR, message: reason }),
    end: () => span.end(),
    carrier: () => carrierOf(ctx),
  };
}

function createTracer(sdk: NodeSDK): Tracer {
  const otel = trace.getTracer('floorline');
  return {
    enter(name, start: SpanStart, work) {
      const parent = start.parent === undefined ? context.active() : start.parent === null ? ROOT_CONTEXT : contextOf(start.parent);
      const links = (start.links ?? []).map(linkOf).filter((link) => link !== null);
      const span = otel.startSpan(
        name,
        { kind: kinds[start.kind ?? 'internal'], attributes: attributesOf(start.attributes), links },
        parent,
      );
      const ctx = trace.setSpan(parent, span);
      return context.with(ctx, () => work(wrap(span, ctx)));
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
