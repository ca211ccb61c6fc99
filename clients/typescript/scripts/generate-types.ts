// Regenerates src/schema.d.ts from the OpenAPI document, built in-process from the server's route
// definitions (no running server needed): `npm run generate -w @floorline/client`.
// A test compares the committed file with a fresh generation, so the types cannot drift from the API.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { buildOpenApi } from '../../../src/http/openapi.js';
import { apiRoutes } from '../../../src/routes/index.js';

export const schemaFile = fileURLToPath(new URL('../src/schema.d.ts', import.meta.url));

/** The text of src/schema.d.ts for the current routes. */
export async function generateSchemaTypes(): Promise<string> {
  // As JSON text: openapi-typescript reads a string as the document itself.
  const ast = await openapiTS(JSON.stringify(buildOpenApi(apiRoutes)), { silent: true, emptyObjectsUnknown: true });
  return COMMENT_HEADER + astToString(ast);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(schemaFile, await generateSchemaTypes());
  process.stdout.write(`wrote ${schemaFile}\n`);
  // The route modules open database and Redis pools on import; nothing else is left to do.
  process.exit(0);
}
