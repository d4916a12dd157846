/** `npm run openapi`: regenerates docs/openapi.json from the route table and the zod schemas. */
import { writeFileSync } from 'node:fs';
import { generateOpenApi, serialize } from '../lib/openapi/generate';

writeFileSync('docs/openapi.json', serialize(await generateOpenApi()));
console.log('docs/openapi.json written');
