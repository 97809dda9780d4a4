import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nip19 } from 'nostr-tools';
import { describe, expect, it } from 'vitest';
import type { RelayConfig } from '../src/config/env.js';
import { ERRORS } from '../src/errors.js';
import { type NostrEvent, serializeEvent } from '../src/nostr/event.js';
import { DELETED } from '../src/store/tombstones.js';
import { serveCli, spawnCli } from './support/cli.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { relayScenario } from './support/relay-scenario.js';
import { getJson } from './support/test-server.js';
import { BOTH_STORES, storeAndServer } from './support/both-stores.js';

/**
 * Fetch on miss meets deletions (NIP-09) and requests to vanish (NIP-62): an event lookup at the
 * relays also asks `{"kinds":[5],"#e":[ids]}` in the same REQ, stores the author's deletion with the
 * event, and answers 404 event_deleted; the tombstone then answers from the index.
 */

// Relays, stores and servers per test, stopped after it (reverse order).
const { cleanups, relay } = relayScenario();

const T = 1_700_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const JSON_TYPE = 'application/json; charset=utf-8';
const EVENT_DELETED = { error: { status: 404, code: 'event_deleted', message: ERRORS.event_deleted.message } };

/** What an event lookup asks a relay for `id`: the event, and the deletion requests naming it. */
const lookupFilters = (id: string) => [{ ids: [id] }, { kinds: [5], '#e': [id] }];

const STORES = BOTH_STORES;

describe.each(STORES)('fetch on miss and deletions, $name store', ({ open }) => {
  /** A store (seeded, one write per event) and a server on it with `relays`; both stopped after the test. */
  const service = (relays: Partial<RelayConfig>, seed: NostrEvent[] = []) => storeAndServer(open, cleanups, relays, seed);

  function expectEventDeleted(response: Awaited<ReturnType<typeof getJson>>) {
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.body).toEqual(EVENT_DELETED);
    expect(response.text).toBe(JSON.stringify(EVENT_DELETED));
  }

  it('a relay holding a note and its author’s deletion: 404 event_deleted, in one REQ; then the index answers, with the relay stopped', async () => {
    const author = profile('dm-alice', { name: 'Alice' }, T);
    const note = signed('dm-alice', { content: 'oops', created_at: T + 1 });
    const request = deletion('dm-alice', { ids: [note.id], at: T + 10 });
    const holder = await relay({ events: [author, note, request] });
    const { server, store } = await service({ urls: [holder.url] });

    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    // One REQ asked for the note and for the deletion requests naming it.
    expect(holder.requests[0]).toEqual(lookupFilters(note.id));
    // The index keeps the tombstone, and the deletion request itself, verified and readable.
    expect(await store.getEvents([note.id])).toEqual([DELETED]);
    expect((await store.getEvents([request.id]))[0]?.event).toEqual(request);

    // Again: answered by the index, the relay not asked about the id again.
    const asked = holder.requests.length;
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expect(holder.requests.slice(asked).flat().filter((filter) => 'ids' in filter || '#e' in filter)).toEqual([]);

    // And with the relay gone.
    await holder.stop();
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expectEventDeleted(await getJson(`${server.url}/event?id=${nip19.noteEncode(note.id)}`));
    // The deletion request stays readable from the index.
    const readable = await getJson(`${server.url}/event?id=${request.id}`);
    expect(readable.status).toBe(200);
    expect((readable.body as { event: NostrEvent }).event).toEqual(request);
  });

  it('GraphQL: the same fetch answers null for the deleted note, with no error', async () => {
    const note = signed('dm-gina', { content: 'gone', created_at: T + 1 });
    const kept = signed('dm-gina', { content: 'kept', created_at: T + 2 });
    const holder = await relay({ events: [note, kept, deletion('dm-gina', { ids: [note.id], at: T + 10 })] });
    const { server, store } = await service({ urls: [holder.url] });
    const response = await getJson(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: `{ event(id: "${note.id}") { id } events(ids: ["${note.id}", "${kept.id}"]) { id } }` }),
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { event: null, events: [null, { id: kept.id }] } });
    // One REQ asked for both ids and for the deletions naming them.
    expect(holder.requests[0]).toEqual([{ ids: [note.id, kept.id] }, { kinds: [5], '#e': [note.id, kept.id] }]);
    expect(await store.getEvents([note.id])).toEqual([DELETED]);
    expect((await store.getEvents([kept.id]))[0]?.event).toEqual(kept);
  });

  it('a relay holding a note and a kind-5 naming it by ANOTHER key: 200 with the note; the forged deletion is not kept', async () => {
    const author = profile('dm-bob', { name: 'Bob' }, T);
    const note = signed('dm-bob', { content: 'mine', created_at: T + 1 });
    const forged = deletion('dm-mallory', { ids: [note.id], at: T + 10 });
    const holder = await relay({ events: [author, note, forged] });
    const { server, store } = await service({ urls: [holder.url] });

    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.text).toBe(`{"event":${serializeEvent(note)},"profiles":{"${author.pubkey}":${serializeEvent(author)}}}`);
    expect(holder.requests[0]).toEqual(lookupFilters(note.id));
    expect((await store.getEvents([note.id]))[0]?.event).toEqual(note);
    // Only deletions by the found event's author are stored with it.
    expect(await store.getEvents([forged.id])).toEqual([null]);

    await holder.stop();
    expect((await getJson(`${server.url}/event?id=${note.id}`)).status).toBe(200);
  });

  it('a relay holding the note, its author’s deletion and another key’s: still event_deleted', async () => {
    const note = signed('dm-hana', { content: 'x', created_at: T + 1 });
    const holder = await relay({
      events: [note, deletion('dm-mallory', { ids: [note.id], at: T + 10 }), deletion('dm-hana', { ids: [note.id], at: T + 11 })],
    });
    const { server } = await service({ urls: [holder.url] });
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
  });

  it('a flood of large deletions by other keys, sent before the note, crowds out nothing: the author’s deletion still wins, and memory stays bounded', async () => {
    const note = signed('dm-ivy', { content: 'flooded', created_at: T + 1 });
    // 1,100 strangers' deletions naming the note, 1 KB each (more than the 256 KiB a search keeps,
    // and more than any count cap), then the note, then its author's deletion.
    const junk = Array.from({ length: 1100 }, (_, index) =>
      signed(`dm-junk-${index}`, { kind: 5, created_at: T + 20, tags: [['e', note.id]], content: 'x'.repeat(1000) }),
    );
    const holder = await relay({ events: [...junk, note, deletion('dm-ivy', { ids: [note.id], at: T + 10 })] });
    const { server, store } = await service({ urls: [holder.url] });
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    // None of the strangers' deletions was kept.
    expect(await store.getEvents(junk.slice(0, 5).map((event) => event.id))).toEqual([null, null, null, null, null]);
  });

  it('an nevent naming the wrong author does not get the real author’s deletion dropped: event_deleted, for everyone after', async () => {
    const note = signed('dm-jan', { content: 'deleted', created_at: T + 1 });
    // The relay sends the (newer) deletion before the note.
    const holder = await relay({ events: [deletion('dm-jan', { ids: [note.id], at: T + 10 }), note], newestFirstAcrossFilters: true });
    const { server } = await service({ urls: [holder.url] });
    const wrong = nip19.neventEncode({ id: note.id, author: pubkeyOf('dm-not-jan') });
    expectEventDeleted(await getJson(`${server.url}/event?id=${wrong}`));
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
  });

  it('the index already holds the author’s deletion (it came first): the note a relay brings back is refused, 404 event_deleted', async () => {
    const note = signed('dm-carol', { content: 'deleted before it was fetched', created_at: T + 1 });
    const request = deletion('dm-carol', { ids: [note.id], at: T + 10 });
    // The relay has the note only.
    const holder = await relay({ events: [note] });
    const { server, store } = await service({ urls: [holder.url] }, [request]);
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expect(await store.getEvents([note.id])).toEqual([DELETED]);
    await holder.stop();
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
  });

  it('the index holds the author’s request to vanish: an earlier note a relay brings back is event_deleted, a later one 200', async () => {
    const earlier = signed('dm-dora', { content: 'before', created_at: T + 1 });
    const later = signed('dm-dora', { content: 'after', created_at: T + 100 });
    const holder = await relay({ events: [earlier, later] });
    const { server, store } = await service({ urls: [holder.url] }, [vanish('dm-dora', T + 50)]);
    expectEventDeleted(await getJson(`${server.url}/event?id=${earlier.id}`));
    expect(await store.getEvents([earlier.id])).toEqual([DELETED]);
    const response = await getJson(`${server.url}/event?id=${later.id}`);
    expect(response.status).toBe(200);
    expect((response.body as { event: NostrEvent }).event).toEqual(later);
  });

  it('a relay holding the author’s request to vanish but not a deletion: the note is served (only kind 5 is asked with an id)', async () => {
    // NIP-62 requests are not asked for with an id lookup: without one in the index, the note is served.
    const note = signed('dm-ivy', { content: 'x', created_at: T + 1 });
    const holder = await relay({ events: [note, vanish('dm-ivy', T + 50)] });
    const { server } = await service({ urls: [holder.url] });
    const response = await getJson(`${server.url}/event?id=${note.id}`);
    expect(response.status).toBe(200);
    expect(holder.requests[0]).toEqual(lookupFilters(note.id));
  });

  it('an nevent whose relay hint is the loopback relay (RELAY_ALLOW_PRIVATE): the hinted relay is asked for the deletions too, 404 event_deleted', async () => {
    const note = signed('dm-erin', { content: 'only on the hinted relay', created_at: T + 1 });
    const request = deletion('dm-erin', { ids: [note.id], at: T + 10 });
    const configured = await relay({ events: [] });
    const hinted = await relay({ events: [note, request] });
    const { server, store } = await service({ urls: [configured.url], allowPrivateHints: true });
    const nevent = nip19.neventEncode({ id: note.id, relays: [hinted.url] });

    expectEventDeleted(await getJson(`${server.url}/event?id=${nevent}`));
    expect(hinted.requests[0]).toEqual(lookupFilters(note.id));
    expect(configured.requests[0]).toEqual(lookupFilters(note.id));
    expect(await store.getEvents([note.id])).toEqual([DELETED]);

    // Both relays gone: the index answers, for the bare id as for the nevent.
    await hinted.stop();
    await configured.stop();
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expectEventDeleted(await getJson(`${server.url}/event?id=${nevent}`));
  });

  it('a slow relay holding the note and its author’s deletion, a quick one holding nothing: the answer waits for the relay that delivered the note', async () => {
    const note = signed('dm-lena', { content: 'on the slow relay only', created_at: T + 1 });
    const empty = await relay({ events: [] });
    const slow = await relay({ events: [note, deletion('dm-lena', { ids: [note.id], at: T + 10 })], delayMs: 150 });
    const { server, store } = await service({ urls: [empty.url, slow.url] });
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expect(await store.getEvents([note.id])).toEqual([DELETED]);
  });

  // FAILS (found by this file; see the report): a relay holding both the note and its author's
  // deletion does not make the lookup answer event_deleted when another relay, holding only the
  // note, answers first. The search completes as soon as every key is found and every relay that
  // has delivered one has ended (relay-search.ts completeIfAnswered): the slow relay has delivered
  // nothing yet, so its answer is cut off, the note is stored and served 200, and from then on the
  // index serves it without asking the relays again.
  it('a quick relay holding only the note, a slow one holding the note and its author’s deletion: event_deleted', async () => {
    const note = signed('dm-fay', { content: 'on two relays', created_at: T + 1 });
    const request = deletion('dm-fay', { ids: [note.id], at: T + 10 });
    const quick = await relay({ events: [note] });
    const slow = await relay({ events: [note, request], delayMs: 150 });
    const { server, store } = await service({ urls: [quick.url, slow.url] });
    expectEventDeleted(await getJson(`${server.url}/event?id=${note.id}`));
    expect(await store.getEvents([note.id])).toEqual([DELETED]);
    expect(slow.requests[0]).toEqual(lookupFilters(note.id));
  });
});

describe('nostr-lookup serve, embedded store: SIGTERM while a deleted profile is refreshed in the background', () => {
  // A profile the index answers without a freshness mark is refreshed in the background
  // (read-through.ts refreshInBackground), and DELETED counts as a stored profile there (here: authors
  // who asked to vanish, imported, so never marked). Shutdown used to close the LMDB store under
  // such a refresh, and lmdb-js killed the process (SIGSEGV, 8 runs of 8, before 6f123d4 too): now
  // service.ts waits for the refreshes (ReadThrough.settled) and a closed store refuses reads.
  it('exits 0 after the request in flight, whose deleted profiles it began to refresh', { timeout: 40_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'nostr-lookup-deletions-serve-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    // Five authors who asked to vanish, imported with their profiles (which the requests delete).
    const names = ['dm-kate', 'dm-kim', 'dm-kai', 'dm-kit', 'dm-kay'];
    const file = join(dataDir, 'events.jsonl');
    writeFileSync(file, names.map((name) => `${serializeEvent(profile(name, { name }, T))}\n${serializeEvent(vanish(name, T + 50))}\n`).join(''));
    const env = { REDIS_URL: undefined, DATA_DIR: join(dataDir, 'db') };
    const imported = spawnCli(['import', file, '--json'], env);
    expect(await imported.exited).toBe(0);
    expect(JSON.parse(imported.output().trim().split('\n').at(-1) ?? '{}')).toMatchObject({ read: 10, stored: 0, applied: 5, deleted: 5 });

    // A note on a relay that takes its time to send it.
    // By one of them, after the request to vanish (so served), naming the others.
    const note = signed('dm-kate', { content: 'back, naming the others', created_at: T + 100, tags: names.slice(1).map((name) => ['p', pubkeyOf(name)]) });
    const slow = await relay({ events: [note], delayMs: 800 });
    const served = await serveCli({ ...env, RELAYS: slow.url, INDEXER_RELAYS: '', RELAY_TIMEOUT_MS: '3000' });
    cleanups.push(async () => {
      served.child.kill('SIGKILL');
    });
    // The signal comes while /event waits for the relay: the request is finished first, and at its
    // end it reads the five (unmarked) deleted profiles, which starts their background refresh.
    const pending = getJson(`${served.url}/event?id=${note.id}`);
    await sleep(300);
    served.child.kill('SIGTERM');
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.text).toBe(`{"event":${serializeEvent(note)},"profiles":{}}`);
    // The service forces its exit (code 1) 10 s after the signal at most.
    const code = await Promise.race([served.exited, sleep(12_000).then(() => 'still running')]);
    // On failure, the last lines it wrote say why.
    const tail = served.output().trim().split('\n').slice(-12).join('\n');
    expect({ code, signal: served.child.signalCode }, tail).toEqual({ code: 0, signal: null });
  });
});
