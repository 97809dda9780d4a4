import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServingCli, serveCli, spawnCli } from '../support/cli.js';

/**
 * GraphiQL and the API docs in a real browser: a headless Chromium from the system (CHROMIUM_PATH, or
 * Debian's `chromium`), every request that is not to the loopback service blocked, against
 * `nostr-lookup serve` with the sample imported and no relays.
 */

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const executablePath = CANDIDATES.find((path): path is string => !!path && existsSync(path));

let dataDir: string;
let served: ServingCli;
let browser: Browser;

beforeAll(async () => {
  if (!executablePath) throw new Error('No Chromium found: set CHROMIUM_PATH, or apt-get install chromium');
  dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-browser-'));
  const imported = spawnCli(['import', 'sample/events.jsonl'], { DATA_DIR: dataDir, RELAYS: '' });
  expect(await imported.exited).toBe(0);
  served = await serveCli({ DATA_DIR: dataDir, RELAYS: '' });
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (served) {
    served.child.kill('SIGTERM');
    await served.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** A page on which every request off the loopback service is refused (and recorded), console errors recorded. */
async function offlinePage(): Promise<{ page: Page; offMachine: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const offMachine: string[] = [];
  const errors: string[] = [];
  const service = new URL(served.url);
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && url.host !== service.host) {
      offMachine.push(url.href);
      return route.abort();
    }
    return route.continue();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, offMachine, errors };
}

/** Opens GraphiQL and waits until its editor shows the example query (the page is ready to run it). */
async function openGraphiql(page: Page): Promise<void> {
  await page.goto(`${served.url}/graphql`);
  // (Locators, not waitForFunction: vitest rewrites functions it compiles, and the page cannot run them.)
  await page.locator('.graphiql-query-editor .view-lines', { hasText: 'Nostr lookup: events with the profiles' }).waitFor({ timeout: 20_000 });
}

/** The result pane's text without whitespace (the editor draws spaces as no-break spaces and wraps long lines). */
const responseText = (page: Page) => page.textContent('.graphiql-response').then((text) => (text ?? '').replace(/\s+/g, ''));

describe('GraphiQL at /graphql, offline, in headless Chromium', () => {
  it('loads with no request leaving the machine, runs the example query, and shows the data', async () => {
    const { page, offMachine, errors } = await offlinePage();
    await openGraphiql(page);
    expect(await page.title()).toBe('Nostr lookup — GraphiQL');
    await page.click('.graphiql-execute-button');
    // The example's event (sample) and its people: Vitor Pamplona wrote it, and names JeffG.
    await page.locator('.graphiql-response', { hasText: 'Vitor Pamplona' }).waitFor({ timeout: 15_000 });
    const shown = await responseText(page);
    expect(shown).toMatch(/^\{"data":\{"event":\{"id":"d7c2b6093d9dfa3f452b871da8b3290a42159db6cd084ff17bcd6c6e25fc2a06","kind":1,"createdAt":1689715846,/);
    expect(shown).toContain('"displayName":"VitorPamplona"');
    expect(shown).not.toContain('errors');
    expect(offMachine).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs a query typed into the editor', async () => {
    const { page, offMachine, errors } = await offlinePage();
    await openGraphiql(page);
    await page.click('.graphiql-query-editor .monaco-editor');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('{ profile(pubkey: "npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc") { name displayName } }');
    await page.locator('.graphiql-query-editor .view-lines', { hasText: 'displayName' }).waitFor();
    await page.keyboard.press('Control+Enter');
    await page.locator('.graphiql-response', { hasText: 'JeffG' }).waitFor({ timeout: 15_000 });
    expect(await responseText(page)).toBe('{"data":{"profile":{"name":"JeffG","displayName":"JeffG"}}}');
    expect(offMachine).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('API docs at /docs, offline, in headless Chromium', () => {
  it('Swagger UI loads from the service alone, shows both routes, and runs a lookup against the service', async () => {
    const { page, offMachine, errors } = await offlinePage();
    await page.goto(`${served.url}/docs`);
    await page.locator('.swagger-ui .info .title', { hasText: 'Nostr lookup' }).waitFor({ timeout: 20_000 });
    const operations = await page.locator('.opblock-summary-path').allTextContents();
    expect(operations.map((text) => text.replace(/\u200b/g, ''))).toEqual(expect.arrayContaining(['/user-profile', '/event']));
    // Try it out: the sample's profile of JeffG, answered by the service.
    await page.locator('.opblock-summary-path', { hasText: '/user-profile' }).click();
    await page.locator('.try-out__btn').click();
    await page.locator('input[placeholder="pubkey"]').fill('npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc');
    await page.locator('.execute').click();
    await page.locator('.responses-wrapper .live-responses-table', { hasText: 'JeffG' }).waitFor({ timeout: 15_000 });
    expect(offMachine).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the landing page at /, offline, in headless Chromium', () => {
  it('says what the index holds and links to GraphiQL and the docs, with nothing fetched from elsewhere (a screenshot is kept)', async () => {
    const { page, offMachine, errors } = await offlinePage();
    await page.goto(`${served.url}/`);
    expect(await page.title()).toBe('nostr-lookup');
    // The sample: 358 servable events (four profiles were replaced), 58 profiles.
    expect((await page.locator('#held').textContent())?.replace(/\s+/g, ' ')).toMatch(/^The index holds 358 events, 58 profiles, 0 follow lists naming 0 follows, and 535 notifications \(\d+\.\d MB\)\.$/);
    expect(await page.locator('a[href="/graphql"]').count()).toBeGreaterThan(0);
    expect(await page.locator('a[href="/docs"]').count()).toBeGreaterThan(0);
    const screenshot = join(dataDir, 'landing.png');
    const png = await page.screenshot({ path: screenshot, fullPage: true });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(5_000);
    expect(offMachine).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
