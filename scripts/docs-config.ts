/**
 * Writes docs/configuration.md's table of environment variables again from the configuration's
 * models and their help (src/config): `npm run docs:config` after changing either. A test fails
 * while the page differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withConfigurationTable } from '../src/cli/environment-help.js';

const path = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(path, withConfigurationTable(readFileSync(path, 'utf8')));
