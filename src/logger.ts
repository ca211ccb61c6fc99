import pino, { type LevelWithSilent } from 'pino';
import { activeTraceIds } from './tracing/tracing.js';

// Asynchronous writes (pino's documented destination): a line is queued in memory and written by
// the next write call, so logging never blocks a request on the terminal or a pipe.
const output = pino.destination({ sync: false });
process.on('exit', () => output.flushSync());

// `info` until the entry point sets the configured level (setLogLevel): nothing is read at import.
// A line written inside a span carries its trace_id and span_id while tracing is on. pino merges a
// line's fields into the object the mixin returns: a fresh one each line, else every line would
// carry the fields of every line before it.
const options = { level: 'info', base: { pid: process.pid }, mixin: () => activeTraceIds() ?? {} };

export const logger = pino(
  { ...options, redact: { paths: ['*.authorization', '*.secret', '*.key', 'req.headers.authorization'], censor: '[redacted]' } },
  output,
);

/**
 * The closing line of every request goes through a logger of its own on the same destination (so the
 * lines keep their order): its fields are fixed and hold no secret, so it skips the redaction pass,
 * which cost each request more than the rest of its line.
 */
const requestLineLogger = pino(options, output);

/** Sets the level of every logger of the process (LOG_LEVEL): by its entry point, or a test's setup. */
export function setLogLevel(level: LevelWithSilent): void {
  logger.level = level;
  requestLineLogger.level = level;
}

/** The closing line of a request. */
export interface RequestLine {
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  /** The id of the API key that authenticated (never the key itself); null when none did. */
  keyId: string | null;
  /** The client address as TRUST_PROXY lets it be read (docs/security.md "Client address"). */
  ip: string | undefined;
}

export function writeRequestLine(line: RequestLine): void {
  requestLineLogger.info(line, 'request');
}
