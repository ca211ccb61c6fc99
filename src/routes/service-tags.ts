import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import {
  createServiceTag,
  deleteServiceTag,
  getVisibleServiceTag,
  listServiceTags,
  renameServiceTag,
  serviceTagJson,
} from '../services/guests/service-tag-service.js';
import { listQuerySchema } from '../services/pagination.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { serviceTagSchema } from '../services/guests/service-tag-service.js';

const idParams = z.object({ id: z.uuid() });
const tagName = z.string().trim().min(1).max(100);

export const serviceTagRoutes = [
  defineRoute({
    method: 'get',
    path: '/service-tags',
    operationId: 'listServiceTags',
    responses: { 200: pageOf(serviceTagSchema) },
    tag: 'Guests',
    summary: 'List service tags',
    scope: 'guests:read',
    query: listQuerySchema.extend({ venueId: z.uuid().optional() }),
    handler: async ({ auth, query, services }) => {
      const page = await listServiceTags(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(serviceTagJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service-tags',
    operationId: 'createServiceTag',
    responses: { 201: keyed('serviceTag', serviceTagSchema) },
    errors: ['conflict'],
    tag: 'Guests',
    summary: 'Create a service tag',
    description: 'Names are unique per venue, whatever their case: a duplicate is a 409 conflict.',
    scope: 'guests:write',
    body: z.object({ venueId: z.uuid(), name: tagName }),
    successStatus: 201,
    handler: async ({ auth, body }) => ({ body: { serviceTag: serviceTagJson(await createServiceTag(auth, body)) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/service-tags/:id',
    operationId: 'getServiceTag',
    responses: { 200: keyed('serviceTag', serviceTagSchema) },
    tag: 'Guests',
    summary: 'Read a service tag',
    scope: 'guests:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { serviceTag: serviceTagJson(await getVisibleServiceTag(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/service-tags/:id',
    operationId: 'renameServiceTag',
    responses: { 200: keyed('serviceTag', serviceTagSchema) },
    errors: ['conflict'],
    tag: 'Guests',
    summary: 'Rename a service tag',
    description: 'Guests carrying the tag carry the new name (their updatedAt moves; no event).',
    scope: 'guests:write',
    params: idParams,
    body: z.object({ name: tagName }),
    handler: async ({ auth, params, body }) => ({
      body: { serviceTag: serviceTagJson(await renameServiceTag(auth, params.id, body.name)) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/service-tags/:id',
    operationId: 'deleteServiceTag',
    responses: { 204: null },
    tag: 'Guests',
    summary: 'Delete a service tag',
    description: 'The tag is taken off every guest carrying it (their updatedAt moves; no event).',
    scope: 'guests:write',
    params: idParams,
    successStatus: 204,
    handler: async ({ auth, params }) => {
      await deleteServiceTag(auth, params.id);
    },
  }),
];
