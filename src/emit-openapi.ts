// `npm run openapi`: writes the OpenAPI document built from the route definitions (what
// GET /api/v1/openapi.json serves) to clients/typescript/openapi.json, the file the typed client's
// generator reads: the client package imports nothing of the server. A test compares the committed
// file with the routes, so it cannot drift from the API.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApi } from './http/openapi.js';
import { projectRoot } from './project-root.js';
import { apiRoutes } from './routes/index.js';

export const openApiFile = path.join(projectRoot, 'clients/typescript/openapi.json');

/** The text of the emitted document: the routes' document, indented, one trailing newline. */
export function formatOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(apiRoutes), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(openApiFile, formatOpenApi());
  process.stdout.write(`wrote ${openApiFile}\n`);
}
