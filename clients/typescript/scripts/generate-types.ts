// Regenerates src/schema.d.ts from the emitted OpenAPI document, openapi.json beside this package's
// package.json (the server writes it: `npm run openapi` at the repository's root), then
// `npm run generate -w @floorline/client`. No server code is imported: the document is the contract.
// A test compares the committed file with a fresh generation, so the types cannot drift from the API.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

export const schemaFile = fileURLToPath(new URL('../src/schema.d.ts', import.meta.url));
export const documentFile = fileURLToPath(new URL('../openapi.json', import.meta.url));

/** The text of src/schema.d.ts for the document in openapi.json. */
export async function generateSchemaTypes(): Promise<string> {
  // As JSON text: openapi-typescript reads a string as the document itself.
  const ast = await openapiTS(await readFile(documentFile, 'utf8'), { silent: true, emptyObjectsUnknown: true });
  return COMMENT_HEADER + astToString(ast);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(schemaFile, await generateSchemaTypes());
  process.stdout.write(`wrote ${schemaFile}\n`);
}
