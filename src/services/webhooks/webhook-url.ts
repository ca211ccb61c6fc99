import { isIP } from 'node:net';
import { z } from 'zod';
import { processConfig } from '../../config.js';
import { checkAddress } from '../../lib/ip-address-check.js';

/**
 * An address that may receive webhooks: HTTPS (plain http only where private targets are allowed,
 * i.e. tests), no credentials in it, and not an internal IP literal. Host names are checked when
 * resolved, at every attempt.
 */
export const webhookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .superRefine((value, ctx) => {
    // zod runs this refinement even when the url check above failed.
    if (!URL.canParse(value)) return;
    const url = new URL(value);
    const allowPrivate = processConfig().WEBHOOKS_ALLOW_PRIVATE_TARGETS;
    if (url.protocol !== 'https:' && !allowPrivate) ctx.addIssue({ code: 'custom', message: 'must be an https address' });
    if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!allowPrivate && isIP(host) && !checkAddress(host).public) ctx.addIssue({ code: 'custom', message: 'must be a public address' });
  });
