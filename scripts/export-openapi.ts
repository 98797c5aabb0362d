import { writeFileSync } from 'node:fs';
import { generateOpenApiDocument } from './openapi-document.js';

/** `npm run openapi`: writes docs/openapi.json (a test fails when it is stale). */
const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, await generateOpenApiDocument());
console.log(`wrote ${target.pathname}`);
