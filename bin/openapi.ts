/**
 * `npm run openapi`: regenerates docs/openapi.json and docs/event-types.json from the route table and the zod
 * schemas.
 */
import { writeFileSync } from 'node:fs';
import { buildEventTypeCatalog } from '../lib/openapi/event-catalog';
import { generateOpenApi, serialize } from '../lib/openapi/generate';

writeFileSync('docs/openapi.json', serialize(await generateOpenApi()));
writeFileSync('docs/event-types.json', serialize(buildEventTypeCatalog()));
console.log('docs/openapi.json and docs/event-types.json written');
