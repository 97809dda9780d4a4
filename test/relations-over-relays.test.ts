import { afterEach, describe, expect, it } from 'vitest';
import { BOTH_STORES, storeAndServer } from './support/both-stores.js';
import { signed } from './support/events.js';
import { startLoopbackRelay } from './support/loopback-relay.js';

// End to end: GraphQL `stats` and `replies` of a note whose relationships the index
// has not asked for wait for the relays (RELAYS and the author's inbox), then answer from the index.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T = 1_700_000_000;
const note = signed('alice', { content: 'what do you think?', created_at: T });
const inbox = [
  signed('bob', { kind: 7, tags: [['e', note.id], ['p', note.pubkey]], content: '+', created_at: T + 1 }),
  signed('carol', { kind: 7, tags: [['e', note.id], ['p', note.pubkey]], content: '🤙', created_at: T + 2 }),
  signed('dave', { kind: 1, tags: [['e', note.id, '', 'root'], ['p', note.pubkey]], content: 'I agree', created_at: T + 3 }),
  signed('erin', { kind: 6, tags: [['e', note.id], ['p', note.pubkey]], content: '', created_at: T + 4 }),
  signed('frank', { kind: 1, tags: [['q', note.id]], content: 'look at this', created_at: T + 5 }),
];
const QUERY = `{ event(id: "${note.id}") { stats { replies threadReplies quotes reposts reactions { pubkeys likes byContent { content pubkeys } } } replies(first: 5) { edges { node { id } } } } }`;

describe.each(BOTH_STORES)('relationships from relays through GraphQL ($name)', ({ open }) => {
  it('the first read of stats and replies waits for the relays; the second answers from the index without asking them', async () => {
    const relay = await startLoopbackRelay({ events: inbox });
    cleanups.push(() => relay.stop());
    const { server } = await storeAndServer(open, cleanups, { urls: [relay.url], indexerUrls: [] }, [note]);
    const ask = async () => {
      const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) });
      return { status: response.status, body: await response.json() };
    };
    const expected = {
      data: {
        event: {
          stats: {
            replies: 1,
            threadReplies: 1,
            quotes: 1,
            reposts: 1,
            reactions: { pubkeys: 2, likes: 1, byContent: [{ content: '+', pubkeys: 1 }, { content: '🤙', pubkeys: 1 }] },
          },
          replies: { edges: [{ node: { id: inbox[2]?.id } }] },
        },
      },
    };
    expect(await ask()).toEqual({ status: 200, body: expected });
    const asked = relay.requests.filter((filters) => filters.some((filter) => (filter['#e'] ?? filter['#q'])?.includes(note.id))).length;
    expect(asked).toBeGreaterThan(0);
    expect(await ask()).toEqual({ status: 200, body: expected });
    expect(relay.requests.filter((filters) => filters.some((filter) => (filter['#e'] ?? filter['#q'])?.includes(note.id))).length).toBe(asked);
  }, 30_000);
});
