import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { startMetricsServer } from '../src/http/routes/metrics.js';
import { relayLabel } from '../src/metrics/metrics.js';
import { serveCli } from './support/cli.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { captureLogs } from './support/logs.js';
import { relayScenario } from './support/relay-scenario.js';
import { deletion } from './support/deletion-conformance.js';
import { getJson, startTestServer, useTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

/**
 * Prometheus metrics: /metrics parsed by a parser we did not write
 * (parse-prometheus-text-format), before and after traffic; the counters move as they should, and
 * no label carries an id, a pubkey or a URL path.
 */

interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string }[];
}

const alice = profile('metrics-alice', { name: 'alice' });
const note = signed('metrics-alice', { content: 'hi', tags: [['p', pubkeyOf('metrics-bob')]] });
const context = useTestServer([alice, note]);
const off = useTestServer([alice], { metrics: { enabled: false } });
const scenario = relayScenario();

/** The text last scraped, for what the parser does not keep (it drops a histogram's labels and count). */
let lastText = '';

/** When each server was last scraped: /metrics keeps a scrape's text for a second. */
const scrapedAt = new Map<string, number>();

async function scrape(url: string): Promise<Family[]> {
  const wait = (scrapedAt.get(url) ?? 0) + 1050 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  scrapedAt.set(url, Date.now());
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('no-store');
  lastText = await response.text();
  return parsePrometheusTextFormat(lastText) as Family[];
}

/** A histogram's count for one route, read from the text of the last scrape. */
function durationCount(route: string): number {
  const line = lastText.split('\n').find((candidate) => candidate.startsWith(`nostr_lookup_http_request_duration_seconds_count{route="${route}"} `));
  return Number(line?.split(' ')[1] ?? 0);
}

/** The value of one counter series (0 if absent). */
function value(families: Family[], name: string, labels: Record<string, string>): number {
  const family = families.find((candidate) => candidate.name === name);
  const series = family?.metrics.find((metric) => Object.entries(labels).every(([key, wanted]) => metric.labels?.[key] === wanted));
  return Number(series?.value ?? 0);
}

const HEX_64 = /[0-9a-f]{64}/;

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, their durations, lookups by outcome and store commands', async () => {
    const url = context.server.url;
    const before = await scrape(url);
    const durationsBefore = durationCount('/user-profile');
    expect((await getJson(`${url}/user-profile?pubkey=${alice.pubkey}`)).status).toBe(200);
    expect((await getJson(`${url}/user-profile?pubkey=${alice.pubkey}`)).status).toBe(200);
    expect((await getJson(`${url}/event?id=${'0'.repeat(64)}`)).status).toBe(404);
    expect((await getJson(`${url}/event?id=nope`)).status).toBe(400);
    expect((await getJson(`${url}/no/such/route/${alice.pubkey}`)).status).toBe(404);
    const after = await scrape(url);
    const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);

    expect(moved('nostr_lookup_http_requests_total', { route: '/user-profile', method: 'GET', status: '200' })).toBe(2);
    expect(moved('nostr_lookup_http_requests_total', { route: '/event', method: 'GET', status: '404' })).toBe(1);
    expect(moved('nostr_lookup_http_requests_total', { route: '/event', method: 'GET', status: '400' })).toBe(1);
    expect(moved('nostr_lookup_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(durationCount('/user-profile') - durationsBefore).toBe(2);
    // The histogram is cumulative: buckets never decrease, and +Inf is the count.
    const buckets = lastText
      .split('\n')
      .filter((line) => line.startsWith('nostr_lookup_http_request_duration_seconds_bucket{') && line.includes('route="/user-profile"'))
      .map((line) => Number(line.split(' ')[1]));
    expect(buckets).toHaveLength(14);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(buckets.at(-1)).toBe(durationCount('/user-profile'));
    // Relays are off in this server: the index answers or misses.
    expect(moved('nostr_lookup_lookups_total', { kind: 'profile', outcome: 'index_hit' })).toBe(2);
    expect(moved('nostr_lookup_lookups_total', { kind: 'event', outcome: 'index_miss' })).toBe(1);
    const store = after.find((family) => family.name === 'nostr_lookup_store_commands_total')?.metrics.map((metric) => metric.labels?.store);
    expect(store?.some((name) => name === 'redis' || name === 'embedded')).toBe(true);
    const commands = (families: Family[]) => value(families, 'nostr_lookup_store_commands_total', { store: 'redis' }) + value(families, 'nostr_lookup_store_commands_total', { store: 'embedded' });
    expect(commands(after) - commands(before)).toBeGreaterThanOrEqual(3);
    // Process metrics (prom-client's defaults).
    expect(after.some((family) => family.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(after.some((family) => family.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('no label value is an id, a pubkey or a request path, whatever was asked', async () => {
    const url = context.server.url;
    for (const path of [`/event?id=${note.id}`, `/user-profile?pubkey=${alice.pubkey}`, `/${alice.pubkey}`, `/event/${note.id}`]) await fetch(`${url}${path}`);
    await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ event(id: "${note.id}") { id } }` }) });
    for (const family of await scrape(url)) {
      for (const metric of family.metrics) {
        for (const [label, text] of Object.entries(metric.labels ?? {})) {
          expect(text, `${family.name}{${label}}`).not.toMatch(HEX_64);
          if (label === 'route') expect(['/event', '/user-profile', '/graphql', '/healthz', '/readyz', '/metrics', 'unmatched']).toContain(text);
        }
      }
    }
  });

  it('counts relay traffic per configured relay, and every other relay as "other"', async () => {
    const relay = await scenario.relay({ events: [note] });
    const { server } = await scenario.service({ urls: [relay.url] });
    const before = await scrape(server.url);
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(200);
    const after = await scrape(server.url);
    const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(moved('nostr_lookup_relay_requests_total', { relay: relay.url })).toBeGreaterThanOrEqual(1);
    expect(moved('nostr_lookup_relay_events_total', { relay: relay.url, result: 'verified' })).toBeGreaterThanOrEqual(1);
    expect(moved('nostr_lookup_relay_request_outcomes_total', { relay: relay.url })).toBeGreaterThanOrEqual(1);
    expect(moved('nostr_lookup_lookups_total', { kind: 'event', outcome: 'relay_found' })).toBe(1);
    // Asked again: the index answers now.
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(200);
    const again = await scrape(server.url);
    expect(value(again, 'nostr_lookup_lookups_total', { kind: 'event', outcome: 'index_hit' })).toBeGreaterThan(value(after, 'nostr_lookup_lookups_total', { kind: 'event', outcome: 'index_hit' }));
    const relayLabels = new Set(again.flatMap((family) => family.metrics.map((metric) => metric.labels?.relay).filter((label) => label !== undefined)));
    for (const label of relayLabels) expect([relay.url, 'other']).toContain(label);
  });

  it('a configured relay is labelled by scheme, host and path only: a token in its query string never reaches /metrics', async () => {
    const relay = await scenario.relay({ events: [note] });
    const withToken = `${relay.url}?token=s3cr3t-t0ken#fragment`;
    const { server } = await scenario.service({ urls: [withToken] });
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(200);
    const families = await scrape(server.url);
    expect(lastText).not.toContain('s3cr3t');
    expect(lastText).not.toContain('token');
    expect(lastText).not.toContain('fragment');
    expect(value(families, 'nostr_lookup_relay_requests_total', { relay: relay.url })).toBeGreaterThanOrEqual(1);
    expect(value(families, 'nostr_lookup_relay_connections_total', { relay: relay.url })).toBeGreaterThanOrEqual(1);
    expect(value(families, 'nostr_lookup_relay_request_outcomes_total', { relay: relay.url })).toBeGreaterThanOrEqual(1);
    // Credentials too, should a URL ever carry them; learned relays are all "other".
    expect(relayLabel('wss://user:pass@relay.example:4443/nostr/?token=x#y', false)).toBe('wss://relay.example:4443/nostr/');
    expect(relayLabel('wss://relay.example/?token=x', true)).toBe('other');
  });

  it('a scrape is kept for a second: scrapes in a burst cost one formatting', async () => {
    const url = context.server.url;
    // Past any text kept from before: the first fetch below makes a fresh one.
    await new Promise((resolve) => setTimeout(resolve, 1050));
    const first = await (await fetch(`${url}/metrics`)).text();
    await fetch(`${url}/user-profile?pubkey=${alice.pubkey}`);
    expect(await (await fetch(`${url}/metrics`)).text()).toBe(first);
    scrapedAt.set(url, Date.now());
  });

  it('says how full the index is: servable events by kind, and the store\'s bytes (kept counters, read when scraped)', async () => {
    // The process's latest app is the one whose index /metrics reports (`serve` has one): made here.
    const store = await createTestStore();
    const server = await startTestServer(store.store);
    try {
      await store.store.putEvents([alice, note]);
      const families = await scrape(server.url);
      expect(value(families, 'nostr_lookup_index_events', { kind: '0' })).toBe(1);
      expect(value(families, 'nostr_lookup_index_events', { kind: '1' })).toBe(1);
      expect(families.find((family) => family.name === 'nostr_lookup_index_events')?.type).toBe('GAUGE');
      expect(value(families, 'nostr_lookup_index_stored_bytes', {})).toBeGreaterThan(0);
      await store.store.putEvents([signed('metrics-carol', { content: 'a second note', created_at: 1_700_000_500 }), deletion('metrics-alice', { ids: [note.id] })]);
      const after = await scrape(server.url);
      expect(value(after, 'nostr_lookup_index_events', { kind: '1' })).toBe(1);
      expect(value(after, 'nostr_lookup_index_events', { kind: '5' })).toBe(1);
      // A follow list naming two, and a mention of Alice: two follows, and notifications (the mention, the follow).
      await store.store.putEvents([
        signed('metrics-dave', { kind: 3, created_at: 1_700_000_600, content: '', tags: [['p', alice.pubkey], ['p', pubkeyOf('metrics-carol')]] }),
        signed('metrics-carol', { content: 'hi alice', created_at: 1_700_000_601, tags: [['p', alice.pubkey]] }),
      ]);
      const totals = await scrape(server.url);
      expect(value(totals, 'nostr_lookup_index_follows', {})).toBe(2);
      expect(value(totals, 'nostr_lookup_index_notifications', {})).toBe(3);
      expect(totals.find((family) => family.name === 'nostr_lookup_index_notifications')?.type).toBe('GAUGE');
    } finally {
      await server.close();
      await store.cleanup();
    }
  });

  it('METRICS=false: /metrics is not served (404 route_not_found)', async () => {
    const response = await getJson(`${off.server.url}/metrics`);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { status: 404, code: 'route_not_found', message: 'There is no such route.' } });
  });

  it('METRICS_PORT: /metrics alone on a port of its own', async () => {
    const { logger } = captureLogs();
    const server = await startMetricsServer('127.0.0.1', 0, logger);
    try {
      const families = await scrape(`http://127.0.0.1:${server.port}`);
      expect(families.some((family) => family.name === 'nostr_lookup_http_requests_total')).toBe(true);
      expect((await fetch(`http://127.0.0.1:${server.port}/event?id=x`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('serve with METRICS_PORT prints no Fastify deprecation (FSTDEP023)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-metrics-port-'));
    // At debug: serve sends what Node prints on the console (its warnings too) to the log at debug.
    const served = await serveCli({ METRICS_PORT: '0', OFFLINE: 'true', REDIS_URL: '', REDIS_CLUSTER_NODES: '', DATA_DIR: dataDir, LOG_LEVEL: 'debug' });
    try {
      expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      expect(served.output()).toContain('metrics served at /metrics');
      expect(served.output()).not.toContain('FSTDEP');
      expect(served.stderr()).toBe('');
    } finally {
      served.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
