import pino from 'pino';
import { config } from './config.js';

const output = pino.destination({ sync: false, minLength: 0 });

/**
 * Lines are batched here, not by the destination's own minLength: it sizes its buffer with
 * Buffer.byteLength of the whole buffer on every line, which copies the buffer each time (the
 * quadratic half of a line's cost). Here a line is an array push, and one write of up to 4 KiB
 * goes out per batch or every 250 ms. Every logger writes through this, so the lines keep their order.
 */
const batch: string[] = [];
let batchLength = 0;
const destination = {
  write(line: string): void {
    batch.push(line);
    batchLength += line.length;
    if (batchLength >= 4096) flushBatch();
  },
};
function flushBatch(): void {
  if (!batch.length) return;
  output.write(batch.join(''));
  batch.length = 0;
  batchLength = 0;
}
const flushTimer = setInterval(flushBatch, 250);
flushTimer.unref();
process.on('exit', () => {
  flushBatch();
  output.flushSync();
});

const options = { level: config.LOG_LEVEL, base: { pid: process.pid } };

export const logger = pino(
  { ...options, redact: { paths: ['*.authorization', '*.secret', '*.key', 'req.headers.authorization'], censor: '[redacted]' } },
  destination,
);

/** The closing line of a request: what `writeRequestLine` writes, parsed. */
export interface RequestLine {
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * Writes the closing line of a request: the line `logger.info({ requestId, method, path, status, ms },
 * 'request')` writes, formatted here. Its fields are fixed and hold no secret, and pino's generic path
 * (the redaction pass, a serializer call per field, the string assembled piece by piece) cost each
 * request more CPU and garbage than all the rest of its logging.
 */
export function writeRequestLine(line: RequestLine): void {
  if (logger.isLevelEnabled('info')) destination.write(formatRequestLine(line, Date.now()));
}

export function formatRequestLine({ requestId, method, path, status, ms }: RequestLine, time: number): string {
  return `{"level":30,"time":${time},"pid":${process.pid},"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${ms},"msg":"request"}\n`;
}
