import { defineRoute } from '../http/define-route.js';
import { handleRotation, rotationAnswer, rotationBody } from './webhook-endpoints.js';

export const webhookSecretRoutes = [
  defineRoute({
    method: 'post',
    path: '/webhook-secret/rotate',
    operationId: 'rotateOrganisationWebhookSecret',
    responses: { 200: rotationAnswer },
    errors: ['conflict'],
    tag: 'Webhooks',
    summary: 'Generate a new organisation webhook secret (for addresses written in actions) and return it once',
    description:
      'Organisation-wide: refused to keys limited to certain venues. Until the first rotation, deliveries are signed with an initial version nobody can read.',
    scope: 'webhooks:write',
    organisationWide: true,
    body: rotationBody,
    idempotency: 'manual',
    handler: ({ auth, body, req, services }) =>
      handleRotation(req, auth, '/webhook-secret/rotate', { kind: 'organisation' }, body.overlapMinutes, services.signingSecrets),
  }),
];
