import { z } from 'zod';
import { errorReasons, errorStatus, type ErrorCode } from './errors.js';

/**
 * The building blocks of the response contract. Each resource's schema lives beside its serializer
 * (e.g. reservationSchema in reservation-json.ts) and is registered here under a component name, so
 * that the OpenAPI document (src/http/openapi.ts) shows it once, as `#/components/schemas/<id>`, and
 * every answer, list, webhook envelope and event item that carries it points to that one schema.
 */
export const contractRegistry = z.registry<{ id: string; description?: string }>();

/** The ids given to components, kept here: zod's registry offers no public lookup by id. */
const componentIds = new Set<string>();

/** Registers a resource schema as a named component of the document. */
export function component<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  contractRegistry.add(schema, { id, ...(description ? { description } : {}) });
  componentIds.add(id);
  return schema;
}

export function isComponentId(id: string): boolean {
  return componentIds.has(id);
}

/**
 * The JSON Schema the document shows for a schema whose zod form cannot say it (a transform that
 * accepts `a,b` or `a&b` and names the parameter on error): exact for generators, while the server
 * keeps parsing with the zod schema.
 */
const documentedSchemas = new Map<z.ZodType, Record<string, unknown>>();

export function documentAs<T extends z.ZodType>(schema: T, jsonSchema: Record<string, unknown>): T {
  documentedSchemas.set(schema, jsonSchema);
  return schema;
}

export function documentedSchemaOf(schema: z.ZodType): Record<string, unknown> | undefined {
  return documentedSchemas.get(schema);
}

export const uuid = z.uuid();
/** `YYYY-MM-DDTHH:mm:ss.sssZ` (docs/api.md "Requests"). */
export const instant = z.iso.datetime();
/** `YYYY-MM-DD`, venue local. */
export const serviceDate = z.iso.date();
/** `HH:mm`, venue local (docs/api.md "Requests"). */
export const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/);
export const count = z.number().int().min(0);

/** A list answer: `{data: [...], nextCursor}` (docs/api.md "Requests"). */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().nullable() });
}

/** A single-resource answer keyed by the resource name, e.g. `{reservation: {...}}`. */
export function keyed<K extends string, T extends z.ZodType>(key: K, schema: T) {
  return z.object({ [key]: schema } as { [P in K]: T });
}

/**
 * An offered time (docs/api.md): the answer of GET /availability, its alternatives, a hold's
 * proposal and the `details.alternatives` of a 409 no_availability, hence here among the blocks.
 */
export const proposalSchema = component(
  'Proposal',
  z.object({
    time: localTime,
    startsAt: instant,
    endsAt: instant,
    turnTimeMinutes: z.number().int(),
    seats: z.number().int(),
    overflowsShift: z.boolean(),
  }),
  'An offered time (docs/api.md).',
);

/** The error body of docs/api.md "Requests" (each operation narrows `code` to the ones it answers). */
export const errorBodySchema = component(
  'Error',
  z.object({
    error: z.object({
      code: z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z
        .object({
          fields: z.array(z.string()).optional(),
          field: z.string().optional(),
          requiredScope: z.string().optional(),
          reason: z.enum(errorReasons).optional(),
          // The near times of a 409 no_availability, as GET /availability proposes them.
          alternatives: z.array(proposalSchema).optional(),
        })
        .catchall(z.unknown()),
      requestId: z.string(),
    }),
    // Present once the key is known (not on 401s, nor on documentation routes).
    livemode: z.boolean().optional(),
  }),
  'Every error on every endpoint (docs/api.md "Requests"). The HTTP status depends only on `code`.',
);
