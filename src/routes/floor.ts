import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { ApiError } from '../core/errors.js';
import { instantParam } from '../core/validation.js';
import { listQuerySchema } from '../services/pagination.js';
import { getFloorPlan, listAreas, listFloorPlans, listTables } from '../services/floor/floor-reads.js';
import { actorOf } from '../services/outbox/outbox.js';
import {
  activateFloorPlan,
  createFloorPlan,
  replaceFloorPlan,
  setTableBlocked,
  type PlanVersionCondition,
} from '../services/floor/floor-plan-writes.js';
import { listOf } from './venue-config.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { areaSchema, floorPlanSchema, tableSchema } from '../services/floor/floor-plan-views.js';

const venueParams = z.object({ id: z.uuid() });
const planParams = z.object({ id: z.uuid(), planId: z.uuid() });
const tableParams = z.object({ id: z.uuid(), tableId: z.uuid() });
const floorPlanAnswer = keyed('floorPlan', floorPlanSchema);

const name = z.string().trim().min(1).max(200);
const sizeCm = z.number().int().min(1).max(100_000);
const positionCm = z.number().int().min(0).max(100_000);
const seats = z.number().int().min(1).max(500);

// Nested items are strict like the body itself: an unknown field is named, never ignored.
const areaInput = z.strictObject({
  id: z.uuid().optional(),
  name,
  icon: z.string().trim().min(1).max(50).optional(),
  position: z.number().int().min(0).max(10_000).optional(),
  widthCm: sizeCm,
  heightCm: sizeCm,
});

const tableInput = z
  .strictObject({
    id: z.uuid().optional(),
    areaId: z.uuid(),
    name: z.string().trim().min(1).max(50),
    shape: z
      .string()
      .regex(/^[a-z][a-z_]{0,31}$/, 'a lowercase shape name such as square')
      .optional(),
    minSeats: seats,
    maxSeats: seats,
    positionXCm: positionCm.optional(),
    positionYCm: positionCm.optional(),
    widthCm: sizeCm.optional(),
    heightCm: sizeCm.optional(),
    rotationDegrees: z.number().int().min(0).max(359).optional(),
    isBlocked: z.boolean().optional(),
  })
  .superRefine((t, ctx) => {
    if (t.minSeats > t.maxSeats) {
      for (const field of ['minSeats', 'maxSeats'])
        ctx.addIssue({ code: 'custom', path: [field], message: 'minSeats must not exceed maxSeats' });
    }
  });

const combinationInput = z.strictObject({
  id: z.uuid().optional(),
  tableIds: listOf(z.uuid(), { what: 'a table id' }),
});

const contents = {
  areas: z.array(areaInput).max(200).default([]),
  tables: z.array(tableInput).max(2000).default([]),
  combinations: z.array(combinationInput).max(2000).default([]),
};

const planBodyDescription =
  'Every item may carry an `id`. The id of an item of this plan keeps that item; any other id names a new item, ' +
  'so that tables (`areaId`) and combinations (`tableIds`) can refer to new areas and tables of the same body. ' +
  'Items of the plan left out of the body are removed (soft-deleted). A collection left out is empty.';

/** `If-Match: <version>` (or the ETag, i.e. the plan's updatedAt), quoted or bare. */
function readIfMatch(header: string | undefined): PlanVersionCondition | undefined {
  if (header === undefined) return undefined;
  const value = header
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  if (/^\d{1,9}$/.test(value)) return { version: Number(value) };
  const instant = instantParam.safeParse(value);
  if (instant.success) return { updatedAt: instant.data };
  throw ApiError.invalid(['If-Match'], 'If-Match must be the floor plan version (or its ETag).');
}

export const floorRoutes = [
  defineRoute({
    method: 'get',
    path: '/venues/:id/floor-plans',
    operationId: 'listFloorPlans',
    responses: { 200: pageOf(floorPlanSchema) },
    tag: 'Floor',
    summary: 'List the floor plans of a venue',
    scope: 'floor:read',
    params: venueParams,
    query: listQuerySchema,
    handler: async ({ auth, params, query, services }) => ({
      body: await listFloorPlans(auth, params.id, { ...query, cursorKey: services.cursorKey }),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/venues/:id/floor-plans',
    operationId: 'createFloorPlan',
    responses: { 201: floorPlanAnswer },
    tag: 'Floor',
    summary: 'Create a floor plan',
    description: `The first plan of a venue becomes its active plan. ${planBodyDescription}`,
    scope: 'floor:write',
    params: venueParams,
    body: z.object({ name, ...contents }),
    successStatus: 201,
    handler: async ({ auth, params, body, log }) => ({
      body: { floorPlan: await createFloorPlan(auth, actorOf(auth), params.id, body, log) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/venues/:id/floor-plans/:planId',
    operationId: 'getFloorPlan',
    responses: { 200: floorPlanAnswer },
    tag: 'Floor',
    summary: 'Read a floor plan',
    scope: 'floor:read',
    params: planParams,
    handler: async ({ auth, params }) => ({ body: { floorPlan: await getFloorPlan(auth, params.id, params.planId) } }),
  }),
  defineRoute({
    method: 'put',
    path: '/venues/:id/floor-plans/:planId',
    operationId: 'replaceFloorPlan',
    responses: { 200: floorPlanAnswer },
    errors: ['conflict'],
    tag: 'Floor',
    summary: 'Replace the areas, tables and combinations of a floor plan',
    description: `${planBodyDescription} \`name\` left out keeps the name. With \`If-Match: <version>\`, a plan changed since answers 409 conflict (reason version_mismatch).`,
    scope: 'floor:write',
    params: planParams,
    body: z.object({ name: name.optional(), ...contents }),
    ifMatch: true,
    handler: async ({ auth, params, body, req, log }) => ({
      body: {
        floorPlan: await replaceFloorPlan(auth, actorOf(auth), params.id, params.planId, body, readIfMatch(req.headers['if-match']), log),
      },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/venues/:id/floor-plans/:planId/activate',
    operationId: 'activateFloorPlan',
    responses: { 200: floorPlanAnswer },
    tag: 'Floor',
    summary: 'Make a floor plan the active plan of its venue',
    scope: 'floor:write',
    params: planParams,
    handler: async ({ auth, params, log }) => ({
      body: { floorPlan: await activateFloorPlan(auth, actorOf(auth), params.id, params.planId, log) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/venues/:id/tables',
    operationId: 'listTables',
    responses: { 200: pageOf(tableSchema) },
    tag: 'Floor',
    summary: 'List the tables of the active floor plan',
    description: 'Ordered by area position, then table name.',
    scope: 'floor:read',
    params: venueParams,
    query: listQuerySchema,
    handler: async ({ auth, params, query, services }) => ({
      body: await listTables(auth, params.id, { ...query, cursorKey: services.cursorKey }),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/venues/:id/tables/:tableId',
    operationId: 'updateTable',
    responses: { 200: keyed('table', tableSchema) },
    tag: 'Floor',
    summary: 'Block or unblock a table',
    scope: 'floor:write',
    params: tableParams,
    body: z.object({ isBlocked: z.boolean() }),
    handler: async ({ auth, params, body, log }) => ({
      body: { table: await setTableBlocked(auth, actorOf(auth), params.id, params.tableId, body.isBlocked, log) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/venues/:id/areas',
    operationId: 'listAreas',
    responses: { 200: pageOf(areaSchema) },
    tag: 'Floor',
    summary: 'List the areas of the active floor plan',
    description: 'Ordered by position, then name.',
    scope: 'floor:read',
    params: venueParams,
    query: listQuerySchema,
    handler: async ({ auth, params, query, services }) => ({
      body: await listAreas(auth, params.id, { ...query, cursorKey: services.cursorKey }),
    }),
  }),
];
