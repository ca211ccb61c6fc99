import pino from 'pino';
import { config } from './config.js';

// Buffered asynchronous writes: one log line per request must not cost a write syscall each.
const destination = pino.destination({ sync: false, minLength: 4096 });
const flushTimer = setInterval(() => destination.flush(), 250);
flushTimer.unref();
process.on('exit', () => destination.flushSync());

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
