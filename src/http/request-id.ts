import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { logger } from '../logger.js';

const clientIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's X-Request-Id when it is a sensible id, a new UUID otherwise; echoed on the response. */
export function assignRequestId(req: Request, res: Response): void {
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && clientIdPattern.test(sent) ? sent : randomUUID();
  req.requestId = id;
  res.setHeader('X-Request-Id', id);
}

const requestLogger = Symbol('requestLogger');

// req.log: the child logger is made on first use only, so a request that logs nothing but its
// closing line (which names its id itself) pays nothing for it.
Object.defineProperty(express.request, 'log', {
  configurable: true,
  get(this: Request & { [requestLogger]?: Logger }): Logger {
    return (this[requestLogger] ??= logger.child({ requestId: this.requestId }));
  },
});
