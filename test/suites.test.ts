import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SLOW_TESTS } from './slow-tests.js';

// `npm test` leaves out the files test/slow-tests.ts names, which `npm run test:slow` runs: a name
// there that matches no file would leave a suite run by neither.
describe('test suites', () => {
  it('every entry of the slow list names a test file, and the list has no file twice', () => {
    // A directory's test files (`dir/**/*.test.ts`), else one file.
    const DIRECTORY = '/**/*.test.ts';
    const matched = SLOW_TESTS.map((pattern) =>
      pattern.endsWith(DIRECTORY)
        ? readdirSync(pattern.slice(0, -DIRECTORY.length), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.test.ts')).map((name) => `${pattern.slice(0, -DIRECTORY.length)}/${name}`)
        : existsSync(pattern) && pattern.endsWith('.test.ts') ? [pattern] : [],
    );
    for (const [index, files] of matched.entries()) expect(files.length, SLOW_TESTS[index]).toBeGreaterThan(0);
    const all = matched.flat();
    expect(new Set(all).size).toBe(all.length);
  });
});
