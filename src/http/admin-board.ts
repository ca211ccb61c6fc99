import { randomBytes } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Express, NextFunction, Request, Response } from 'express';
import { config } from '../config.js';
import { safeEqual } from '../lib/safe-equal.js';
import { logger } from '../logger.js';
import { getAllQueues } from '../jobs/all-jobs.js';

const basePath = '/admin/queues';

/** Bull Board behind HTTP basic auth; without ADMIN_PASSWORD a random one is generated and logged once. */
export function mountAdminBoard(app: Express): void {
  let password = config.ADMIN_PASSWORD;
  if (!password) {
    password = randomBytes(12).toString('base64url');
    logger.warn({ user: config.ADMIN_USER, password }, `no ADMIN_PASSWORD set: Bull Board at ${basePath} uses this generated password`);
  }
  const expected = `Basic ${Buffer.from(`${config.ADMIN_USER}:${password}`).toString('base64')}`;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: getAllQueues().map((q) => new BullMQAdapter(q)), serverAdapter });
  const requireBasicAuth = (req: Request, res: Response, next: NextFunction) => {
    if (safeEqual(req.headers.authorization ?? '', expected)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
    res.status(401).type('text/plain').send('Authentication required');
  };
  app.use(basePath, requireBasicAuth, serverAdapter.getRouter());
}
