import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

const clientIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's X-Request-Id when it is a sensible id, a new UUID otherwise; echoed on the response. */
export function assignRequestId(req: Request, res: Response): void {
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && clientIdPattern.test(sent) ? sent : randomUUID();
  req.requestId = id;
  res.setHeader('X-Request-Id', id);
}
