import { createRequire } from 'node:module';

/** The version in package.json: one level up from src/version.ts and from dist/version.js alike. */
export const PACKAGE_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
