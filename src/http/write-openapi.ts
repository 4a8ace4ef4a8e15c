import { writeFile } from 'node:fs/promises';
import { openApiDocument } from './openapi-document.js';

/** `npm run openapi`: regenerates openapi/openapi.json from the operation definitions. */
const path = new URL('../../openapi/openapi.json', import.meta.url);
await writeFile(path, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
console.log(`wrote ${path.pathname}`);
