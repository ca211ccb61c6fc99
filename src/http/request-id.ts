import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const clientIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && clientIdPattern.test(sent) ? sent : randomUUID();
  req.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
