import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withConfigurationTable } from '../src/cli/environment-help.js';
import { ERRORS } from '../src/errors.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const api = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
const configuration = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

describe('README', () => {
  it('is a front door: at most 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('docs/api.md lists every error code with its status', () => {
    for (const [code, { status }] of Object.entries(ERRORS)) {
      expect(api).toMatch(new RegExp(`\\|\\s*${status}\\s*\\|\\s*\`${code}\`\\s*\\|`));
    }
  });

  it('shows PORT, HOST, DATA_DIR, REDIS_URL and RELAYS on its first screen', () => {
    const firstScreen = readme.split('\n').slice(0, 45).join('\n');
    for (const variable of ['PORT', 'HOST', 'DATA_DIR', 'REDIS_URL', 'RELAYS']) expect(firstScreen).toMatch(new RegExp(`\\|\\s*\`${variable}\`\\s*\\|`));
    expect(firstScreen).toContain('serve --help');
  });

  it('docs/configuration.md has the table the configuration makes (npm run docs:config)', () => {
    expect(configuration).toBe(withConfigurationTable(configuration));
  });

  it('docs/configuration.md documents every configuration variable', () => {
    const source = readFileSync(new URL('../src/config/env.ts', import.meta.url), 'utf8');
    const variables = [...source.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]);
    expect(variables.length).toBeGreaterThan(8);
    for (const variable of variables) expect(configuration).toMatch(new RegExp(`\\|\\s*\`${variable}\`\\s*\\|`));
  });
});

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

describe('README and docs/: links', () => {
  const pages = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

  it('every relative link names a file that exists, and an anchor its page has', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : join(dirname(page), path);
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (anchor === undefined || !file.endsWith('.md')) continue;
        const anchors = [...readFileSync(file, 'utf8').matchAll(/^#+ (.*)$/gm)].map((match) => anchorOf(match[1] ?? ''));
        if (!anchors.includes(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    for (const page of pages.filter((name) => name.startsWith('docs/'))) expect(readme).toContain(`](${page})`);
  });
});
