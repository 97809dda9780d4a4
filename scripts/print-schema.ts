// `npm run schema:print`: writes schema.graphql from the Pothos schema.
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/schema/print-schema.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
console.log('wrote schema.graphql');
