import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../../core/auth-context.js';
import { getVisibleVenue } from '../venues/venue-service.js';
import { signedHeaders } from '../../lib/webhook-signature.js';
import { serialiseEnvelope } from './envelope.js';
import { postWebhook, type WebhookTargetSettings } from './post-webhook.js';
import { getOrganisationSecretState, secretStateOf, type SigningSecretBox } from './signing-secrets.js';
import { getVisibleEndpoint } from './webhook-endpoint-service.js';

export type TestTarget = { endpointId: string } | { venueId: string; url: string };

export interface TestDeliveryOutcome {
  id: string;
  status: 'delivered' | 'failed';
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * POST /webhook-endpoints/test: a signed `webhook_test` sent now (where `targets` allow), with the
 * secret the destination would use (the endpoint's, or the organisation's for an address, opened by
 * `secrets`), and not kept.
 */
export async function sendTestWebhook(
  auth: AuthContext,
  target: TestTarget,
  secrets: SigningSecretBox,
  targets: WebhookTargetSettings,
): Promise<TestDeliveryOutcome> {
  const endpoint = 'endpointId' in target ? await getVisibleEndpoint(auth, target.endpointId) : null;
  const venueId = endpoint ? endpoint.venueId : (await getVisibleVenue(auth, (target as { venueId: string }).venueId)).id;
  const url = endpoint ? endpoint.url : (target as { url: string }).url;
  const id = randomUUID();
  // Test organisations send nothing (docs/api.md "Requests").
  if (!auth.livemode)
    return { id, status: 'failed', responseStatus: null, durationMs: 0, error: 'not sent: test organisations send no webhooks' };

  const state = endpoint ? secretStateOf(endpoint) : await getOrganisationSecretState(auth.organisationId, secrets);
  const key = `test:${id}`;
  const body = Buffer.from(
    serialiseEnvelope({
      idempotencyKey: key,
      eventId: null,
      type: 'webhook_test',
      createdAt: new Date(),
      venueId,
      data: {},
      automation: null,
    }),
    'utf8',
  );
  const outcome = await postWebhook({
    url,
    headers: signedHeaders(endpoint?.signatureScheme ?? 'service-v1', secrets.open(state), key, body),
    body,
    allowPrivate: targets.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
  });
  return {
    id,
    status: outcome.ok ? 'delivered' : 'failed',
    responseStatus: outcome.status,
    durationMs: outcome.durationMs,
    error: outcome.error,
  };
}
