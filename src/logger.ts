import pino from 'pino';
import { config } from './config.js';

// Buffered asynchronous writes: one log line per request must not cost a write syscall each.
const destination = pino.destination({ sync: false, minLength: 4096 });
const flushTimer = setInterval(() => destination.flush(), 250);
flushTimer.unref();
process.on('exit', () => destination.flushSync());

export const logger = pino(
  {
    level: config.LOG_LEVEL,
    base: { pid: process.pid },
    redact: { paths: ['*.authorization', '*.secret', '*.key', 'req.headers.authorization'], censor: '[redacted]' },
  },
  destination,
);
