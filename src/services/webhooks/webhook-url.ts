import { isIP } from 'node:net';
import { z } from 'zod';
import { ApiError } from '../../core/errors.js';
import { checkAddress } from '../../lib/ip-address-check.js';

/**
 * The form of an address that may receive webhooks: http or https, no credentials in it. Whether it
 * must be https and not an internal IP literal depends on the app's settings: checkWebhookTarget.
 */
export const webhookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .superRefine((value, ctx) => {
    // zod runs this refinement even when the url check above failed.
    if (!URL.canParse(value)) return;
    const url = new URL(value);
    if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
  });

/**
 * The 400 of `field` (the path of the body's field) unless `url` is HTTPS and not an internal IP
 * literal; both are allowed where private targets are (`allowPrivate`: tests). Host names are
 * checked when resolved, at every attempt.
 */
export function checkWebhookTarget(url: string | null | undefined, field: string, allowPrivate: boolean): void {
  if (!url || allowPrivate) return;
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const problems = [
    parsed.protocol === 'https:' ? null : 'must be an https address',
    isIP(host) && !checkAddress(host).public ? 'must be a public address' : null,
  ].filter((problem) => problem !== null);
  if (problems.length) throw ApiError.invalid([field], `Invalid body: ${field}: ${problems.join('; ')}`);
}
