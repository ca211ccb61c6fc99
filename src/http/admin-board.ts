import { randomBytes } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Config } from '../config.js';
import { safeEqual } from '../lib/safe-equal.js';
import { logger } from '../logger.js';
import { getAllQueues } from '../jobs/all-jobs.js';
import type { FailedAuthThrottle } from './failed-auth-throttle.js';

const basePath = '/admin/queues';
const readMethods = new Set(['GET', 'HEAD']);

/**
 * Bull Board behind HTTP basic auth (docs/security.md "Bull Board"); without ADMIN_PASSWORD a random
 * one is generated and logged once. Wrong passwords count as failed authentications of the client
 * address in the app's `failedAuth` (429 after AUTH_FAILURES_PER_MINUTE); with ADMIN_READ_ONLY nothing can be changed.
 */
export function mountAdminBoard(
  app: Express,
  config: Pick<Config, 'ADMIN_USER' | 'ADMIN_PASSWORD' | 'ADMIN_READ_ONLY'>,
  failedAuth: FailedAuthThrottle,
): void {
  let password = config.ADMIN_PASSWORD;
  if (!password) {
    password = randomBytes(12).toString('base64url');
    logger.warn({ user: config.ADMIN_USER, password }, `no ADMIN_PASSWORD set: Bull Board at ${basePath} uses this generated password`);
  }
  const expected = `Basic ${Buffer.from(`${config.ADMIN_USER}:${password}`).toString('base64')}`;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  const readOnlyMode = config.ADMIN_READ_ONLY;
  createBullBoard({
    queues: getAllQueues().map((q) => new BullMQAdapter(q, { readOnlyMode, allowRetries: !readOnlyMode })),
    serverAdapter,
  });
  const requireBasicAuth = (req: Request, res: Response, next: NextFunction) => {
    try {
      failedAuth.refuseThrottledClient(req);
    } catch (err) {
      return next(err);
    }
    if (!safeEqual(req.headers.authorization ?? '', expected)) {
      if (req.headers.authorization) failedAuth.countFailure(req);
      res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
      res.status(401).type('text/plain').send('Authentication required');
      return;
    }
    // The board's own read-only mode hides the buttons; its API is refused here as well.
    if (readOnlyMode && !readMethods.has(req.method)) {
      res.status(403).type('text/plain').send('Bull Board is read-only (ADMIN_READ_ONLY)');
      return;
    }
    next();
  };
  app.use(basePath, requireBasicAuth, serverAdapter.getRouter());
}
