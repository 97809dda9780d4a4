import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every error code with its status', () => {
    for (const [code, { status }] of Object.entries(ERRORS)) {
      expect(readme).toMatch(new RegExp(`\\|\\s*${status}\\s*\\|\\s*\`${code}\`\\s*\\|`));
    }
  });

  it('shows PORT, HOST, DATA_DIR, REDIS_URL and RELAYS on its first screen', () => {
    const firstScreen = readme.split('\n').slice(0, 45).join('\n');
    for (const variable of ['PORT', 'HOST', 'DATA_DIR', 'REDIS_URL', 'RELAYS']) expect(firstScreen).toMatch(new RegExp(`\\|\\s*\`${variable}\`\\s*\\|`));
    expect(firstScreen).toContain('serve --help');
  });

  it('documents every configuration variable', () => {
    const source = readFileSync(new URL('../src/config/env.ts', import.meta.url), 'utf8');
    const variables = [...source.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]);
    expect(variables.length).toBeGreaterThan(8);
    for (const variable of variables) expect(readme).toMatch(new RegExp(`\\|\\s*\`${variable}\`\\s*\\|`));
  });
});
