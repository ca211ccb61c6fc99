import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver decoded it, whatever the protocol it came in. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** How the export request came: application/json or application/x-protobuf. */
  contentType: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporters add /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  close: () => Promise<void>;
}

// ---------------------------------------------------------------- OTLP/JSON

type JsonValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
type JsonKeyValue = { key: string; value: JsonValue };

function jsonValue(v: JsonValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue ?? '';
}

const jsonAttributes = (list: JsonKeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, jsonValue(kv.value)]));

function decodeJson(body: Buffer): Array<Omit<ReceivedSpan, 'contentType'>> {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans: Array<{ resource: { attributes: JsonKeyValue[] }; scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
  };
  return request.resourceSpans.flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource.attributes)['service.name']);
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        service,
        traceId: s.traceId as string,
        spanId: s.spanId as string,
        parentSpanId: (s.parentSpanId as string | undefined) ?? '',
        name: s.name as string,
        kind: s.kind as number,
        attributes: jsonAttributes(s.attributes as JsonKeyValue[]),
        links: ((s.links as Array<{ traceId: string; spanId: string }> | undefined) ?? []).map((l) => ({
          traceId: l.traceId,
          spanId: l.spanId,
        })),
        status: ((s.status as { code?: number } | undefined)?.code ?? 0) as number,
      })),
    );
  });
}

// ---------------------------------------------------------------- OTLP/protobuf
// The few fields of opentelemetry/proto/collector/trace/v1 the tests read, from the wire format
// itself (varints and length-delimited fields): ExportTraceServiceRequest.resource_spans (1);
// ResourceSpans.resource (1), .scope_spans (2); Resource.attributes (1); ScopeSpans.spans (2);
// Span.trace_id (1), span_id (2), parent_span_id (4), name (5), kind (6), attributes (9), links
// (13), status (15); Link.trace_id (1), span_id (2); Status.code (3); KeyValue.key (1), value (2);
// AnyValue.string_value (1), bool_value (2), int_value (3), double_value (4).

type Field = { number: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

function fieldsOf(buffer: Buffer): Field[] {
  const fields: Field[] = [];
  let at = 0;
  const varint = () => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = Number(varint());
    const number = key >> 3;
    const wireType = key & 7;
    if (wireType === 0) fields.push({ number, varint: varint() });
    else if (wireType === 2) {
      const length = Number(varint());
      fields.push({ number, bytes: buffer.subarray(at, at + length) });
      at += length;
    } else if (wireType === 1) {
      fields.push({ number, fixed: buffer.subarray(at, at + 8) });
      at += 8;
    } else if (wireType === 5) {
      fields.push({ number, fixed: buffer.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`unexpected wire type ${wireType}`);
  }
  return fields;
}

const all = (fields: Field[], number: number) => fields.filter((f) => f.number === number);
const one = (fields: Field[], number: number) => fields.find((f) => f.number === number);

function protobufAttributes(fields: Field[], number: number): Record<string, string | number | boolean> {
  return Object.fromEntries(
    all(fields, number).map((kv) => {
      const parts = fieldsOf(kv.bytes!);
      const value = fieldsOf(one(parts, 2)?.bytes ?? Buffer.alloc(0));
      const decoded =
        one(value, 1)?.bytes?.toString('utf8') ??
        (one(value, 2) ? one(value, 2)!.varint === 1n : undefined) ??
        (one(value, 3) ? Number(one(value, 3)!.varint) : undefined) ??
        one(value, 4)?.fixed?.readDoubleLE(0) ??
        '';
      return [one(parts, 1)!.bytes!.toString('utf8'), decoded];
    }),
  );
}

const hex = (field: Field | undefined) => field?.bytes?.toString('hex') ?? '';

function decodeProtobuf(body: Buffer): Array<Omit<ReceivedSpan, 'contentType'>> {
  return all(fieldsOf(body), 1).flatMap((rs) => {
    const resourceSpans = fieldsOf(rs.bytes!);
    const resource = fieldsOf(one(resourceSpans, 1)?.bytes ?? Buffer.alloc(0));
    const service = String(protobufAttributes(resource, 1)['service.name']);
    return all(resourceSpans, 2).flatMap((ss) =>
      all(fieldsOf(ss.bytes!), 2).map((spanField) => {
        const s = fieldsOf(spanField.bytes!);
        const status = fieldsOf(one(s, 15)?.bytes ?? Buffer.alloc(0));
        return {
          service,
          traceId: hex(one(s, 1)),
          spanId: hex(one(s, 2)),
          parentSpanId: hex(one(s, 4)),
          name: one(s, 5)?.bytes?.toString('utf8') ?? '',
          kind: Number(one(s, 6)?.varint ?? 0n),
          attributes: protobufAttributes(s, 9),
          links: all(s, 13).map((l) => {
            const link = fieldsOf(l.bytes!);
            return { traceId: hex(one(link, 1)), spanId: hex(one(link, 2)) };
          }),
          status: Number(one(status, 3)?.varint ?? 0n),
        };
      }),
    );
  });
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (POST /v1/traces) that decodes what the exporters send,
 * in JSON (`http/json`) or protobuf (`http/protobuf`), and keeps every span.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0];
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      try {
        const body = Buffer.concat(chunks);
        const decoded = contentType === 'application/json' ? decodeJson(body) : decodeProtobuf(body);
        spans.push(...decoded.map((s) => ({ ...s, contentType })));
        res.writeHead(200, { 'Content-Type': contentType }).end(contentType === 'application/json' ? '{}' : '');
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
