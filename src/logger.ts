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

/**
 * The closing line of each request. Its fields are fixed and hold no secret, so it skips the
 * redaction pass, which costs every line a walk of its object (a few % of a request's CPU).
 */
export const accessLogger = pino(options, destination);
