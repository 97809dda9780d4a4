import { createHash } from 'node:crypto';
import { getNamedType, isLeafType, isObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_FOLLOWS } from '../src/nostr/follows.js';
import { FIELD_COSTS, operationCost } from '../src/schema/query-cost.js';
import { schema } from '../src/schema/index.js';
import { pubkeyOf, signed } from './support/events.js';
import { startTestServer, useTestServer } from './support/test-server.js';

/**
 * The cost model is calibrated (src/schema/query-cost.ts): every field of the schema is run here on
 * a world where its lists are full (100 events, each with a parent, a root of 100 replies and 60
 * reaction contents; 100 profiles with 100 followers each), ten times per object, and the CPU this
 * process spent on the request (server and client) is held to CPU_PER_UNIT_US per unit of what the
 * model charged, beyond what an empty request costs. A field missing from the table of costs, or
 * charged far less than it costs, fails here.
 */

/** The bound: the model's unit is about 10 µs here; test files run two at a time on two cores. */
const CPU_PER_UNIT_US = 30;

/** The costs the README states for the two everyday screens (SCREENS below). */
const THREAD_COST = 497;
const PROFILE_PAGE_COST = 455;
/** Noise of one request's CPU on a busy machine (a GC, a timer), beyond the empty request's. */
// 6, not 4: a CI run measured Profile.about at 17.6 ms against 16.4 allowed (the least of five runs).
const SLACK_MS = 6;

const T0 = 1_700_000_000;
const user = (i: number) => `cal-user-${i}`;
const users = Array.from({ length: 100 }, (_, i) =>
  signed(user(i), { kind: 0, created_at: T0, content: JSON.stringify({ name: `user ${i}`, about: 'about '.repeat(20), nip05: `user${i}@example.invalid` }) }),
);
const starName = 'cal-star';
const star = pubkeyOf(starName);
const root = signed(starName, { created_at: T0 + 1, content: 'the root' });
const replies = Array.from({ length: 100 }, (_, i) =>
  signed(user(i), { created_at: T0 + 10 + i, content: `reply ${i} nostr:${'npub1'}`, tags: [['e', root.id, '', 'root'], ['p', star], ['q', root.id]] }),
);
const deeper = replies.map((reply, i) =>
  signed(user((i + 1) % 100), { created_at: T0 + 200 + i, content: `deeper ${i}`, tags: [['e', root.id, '', 'root'], ['e', reply.id, '', 'reply'], ['p', reply.pubkey]] }),
);
const reactions = Array.from({ length: 100 }, (_, i) => signed(user(i), { kind: 7, created_at: T0 + 300 + i, content: `:e${i % 60}:`, tags: [['e', root.id], ['p', star]] }));
const replyReactions = replies.flatMap((reply, i) =>
  [0, 1, 2].map((k) => signed(user((i + k + 5) % 100), { kind: 7, created_at: T0 + 400 + i, content: k === 0 ? '+' : `:r${k}:`, tags: [['e', reply.id], ['p', reply.pubkey]] })),
);
// Every user follows the star and all 100 users: 100 followers and 101 followings each.
const lists = Array.from({ length: 100 }, (_, i) => signed(user(i), { kind: 3, created_at: T0, tags: [['p', star], ...users.map((profile) => ['p', profile.pubkey])] }));
const notes = Array.from({ length: 100 }, (_, i) => signed(user(i % 10), { created_at: T0 + 500 + i, content: `note ${i}` }));
// Every user mutes as many words as are read (MAX_MUTE_WORDS), none in the notes: each event of a feed is searched for all.
const muteLists = Array.from({ length: 100 }, (_, i) =>
  signed(user(i), { kind: 10_000, created_at: T0, tags: [...Array.from({ length: 100 }, (_, k) => ['word', `muted-word-${k}`]), ['t', 'muted'], ['e', 'ab'.repeat(32)], ['p', 'cd'.repeat(32)]] }),
);
// A reader following as many pubkeys as a feed reads (MAX_FOLLOWS): the 100 users and 1,900 that wrote nothing.
const readerName = 'cal-reader';
const reader = pubkeyOf(readerName);
const silent = Array.from({ length: MAX_FOLLOWS - users.length }, (_, i) => createHash('sha256').update(`silent ${i}`).digest('hex'));
const readerLists = [
  signed(readerName, { kind: 0, created_at: T0, content: '{"name":"reader"}' }),
  signed(readerName, { kind: 3, created_at: T0, tags: [...users.map((profile) => ['p', profile.pubkey]), ...silent.map((pubkey) => ['p', pubkey])] }),
  signed(readerName, { kind: 10_000, created_at: T0, tags: muteLists[0]?.tags ?? [] }),
];
const SEED = [...readerLists, ...muteLists, ...users, signed(starName, { kind: 0, created_at: T0, content: '{"name":"star"}' }), root, ...replies, ...deeper, ...reactions, ...replyReactions, ...lists, ...notes];

const context = useTestServer(SEED, { graphql: { maxCost: 10_000_000, maxResponseBytes: 256 * 1024 * 1024 } });

const LIMITS = { maxProfiles: 100, maxListLength: 100 } as const;
const REPEAT = 10;
const ALIASES = (selection: string) => Array.from({ length: REPEAT }, (_, n) => `a${n}: ${selection}`).join(' ');

/** The smallest selection inside a field of each object type. */
const INSIDE: Record<string, string> = {
  Event: '{ id }',
  Profile: '{ pubkey }',
  Pubkey: '{ pubkey }',
  EventConnection: '{ pageInfo { hasNextPage } }',
  EventEdge: '{ cursor }',
  EventStats: '{ replies }',
  ReactionStats: '{ pubkeys }',
  ReactionCount: '{ content }',
  ZapStats: '{ count }',
  FollowConnection: '{ pageInfo { hasNextPage } }',
  FollowEdge: '{ pubkey }',
  PageInfo: '{ hasNextPage }',
  Nip05Verification: '{ status }',
  MuteList: '{ words }',
  Notification: '{ type }',
  NotificationEdge: '{ cursor }',
  NotificationConnection: '{ pageInfo { hasNextPage } }',
  NotificationCounts: '{ total }',
};

/** Arguments that make a field's list as long as it may be. */
const ARGUMENTS: Record<string, string> = {
  'Query.event': `(id: "${root.id}")`,
  'Query.events': '(ids: $ids)',
  'Query.profile': `(pubkey: "${star}")`,
  'Query.profiles': '(pubkeys: $pubkeys)',
  'Query.pubkey': `(pubkey: "${star}")`,
  'Query.searchProfiles': '(query: "user", first: 100)',
  // A prefix over two hundred notes and replies ("note", "nostr"): the expansion's lists merged.
  'Query.searchNotes': '(query: "no", first: 100)',
  'Event.replies': '(first: 100)',
  'Profile.followers': '(first: 100)',
  'Profile.following': '(first: 100)',
  'Profile.notes': '(first: 100)',
  'Pubkey.followers': '(first: 100)',
  'Pubkey.following': '(first: 100)',
  'Pubkey.notes': '(first: 100)',
  'Profile.feed': '(first: 100)',
  'Pubkey.feed': '(first: 100)',
  'Profile.notifications': '(first: 100)',
  'Pubkey.notifications': '(first: 100)',
  'Profile.trusts': `(pubkey: "${star}")`,
  'Pubkey.trusts': `(pubkey: "${star}")`,
};

/** A query that reaches many objects of a type (about 100), with `selection` inside each. */
const REACH: Record<string, (selection: string) => string> = {
  Query: (selection) => {
    const used = [
      selection.includes('$ids') ? '$ids: [String!]!' : '',
      selection.includes('$replyIds') ? '$replyIds: [String!]!' : '',
      selection.includes('$pubkeys') ? '$pubkeys: [String!]!' : '',
    ].filter(Boolean);
    return `query${used.length > 0 ? `(${used.join(', ')})` : ''} { ${selection} }`;
  },
  Event: (selection) => REACH.Query!(`events(ids: $ids) { ${selection} }`),
  Profile: (selection) => REACH.Query!(`profiles(pubkeys: $pubkeys) { ${selection} }`),
  // 100 distinct events (the root's replies, with reactions of their own): each read, not a cache hit.
  EventStats: (selection) => REACH.Query!(`events(ids: $replyIds) { stats { ${selection} } }`),
  ReactionStats: (selection) => REACH.EventStats!(`reactions { ${selection} }`),
  // 60 contents on the root: the first 50 of each (MAX_REACTION_CONTENTS), through each reply's root.
  ReactionCount: (selection) => REACH.Event!(`root { stats { reactions { byContent { ${selection} } } } }`),
  ZapStats: (selection) => REACH.EventStats!(`zaps { ${selection} }`),
  EventConnection: (selection) => REACH.Event!(`parent { replies(first: 100) { ${selection} } }`),
  // The root's 100 replies.
  EventEdge: (selection) => REACH.Query!(`event(id: "${root.id}") { replies(first: 100) { edges { ${selection} } } }`),
  PageInfo: (selection) => REACH.EventConnection!(`pageInfo { ${selection} }`),
  FollowConnection: (selection) => REACH.Profile!(`followers(first: 100) { ${selection} }`),
  // The star's 100 followers.
  FollowEdge: (selection) => REACH.Query!(`profile(pubkey: "${star}") { followers(first: 100) { edges { ${selection} } } }`),
  Nip05Verification: (selection) => REACH.Profile!(`nip05Verification { ${selection} }`),
  MuteList: (selection) => REACH.Profile!(`muted { ${selection} }`),
  NotificationConnection: (selection) => REACH.Profile!(`notifications(first: 100) { ${selection} }`),
  NotificationCounts: (selection) => REACH.Profile!(`notificationCounts { ${selection} }`),
  // The star's first 100 notifications (of 300: its root's replies and reactions, and 100 follow lists).
  NotificationEdge: (selection) => REACH.Query!(`pubkey(pubkey: "${star}") { notifications(first: 100) { edges { ${selection} } } }`),
  Notification: (selection) => REACH.NotificationEdge!(`node { ${selection} }`),
};

/**
 * A home feed reads every followed author's list per kind, and a web of trust is one a request:
 * reached on the one reader that follows
 * MAX_FOLLOWS, once (one feed of the default kinds is 6,000 list reads; REPEAT of them at once
 * outwait the test store's command timeout on a busy machine).
 */
const ONE_OBJECT: Record<string, (selection: string) => string> = {
  'Profile.feed': (selection) => REACH.Query!(`profile(pubkey: "${reader}") { ${selection} }`),
  'Pubkey.feed': (selection) => REACH.Query!(`pubkey(pubkey: "${reader}") { ${selection} }`),
  // One web a request: the reader's (2,000 follows, 100 of whom follow 101).
  'Profile.trusts': (selection) => REACH.Query!(`profile(pubkey: "${reader}") { ${selection} }`),
  'Pubkey.trusts': (selection) => REACH.Query!(`pubkey(pubkey: "${reader}") { ${selection} }`),
};

/** Pubkey objects come one per `pubkey(pubkey:)`: fifteen aliases of it, the most the API allows. */
const PUBKEYS = (selection: string) => REACH.Query!(users.slice(0, 15).map((profile, n) => `p${n}: pubkey(pubkey: "${profile.pubkey}") { ${selection} }`).join(' '));

/** Every field of the schema, by `Type.field`, with the query that runs it REPEAT times per object. */
function probes(): Map<string, string> {
  const found = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const reach = REACH[type.name];
    for (const field of Object.values(type.getFields())) {
      const name = `${type.name}.${field.name}`;
      const inner = isLeafType(getNamedType(field.type)) ? '' : (INSIDE[getNamedType(field.type).name] ?? '');
      const selection = `${field.name}${ARGUMENTS[name] ?? ''} ${inner}`;
      const one = ONE_OBJECT[name];
      found.set(name, one ? one(selection) : type.name === 'Pubkey' ? PUBKEYS(selection) : reach ? reach(ALIASES(selection)) : '');
    }
  }
  return found;
}

const VARIABLES = { ids: deeper.map((event) => event.id), pubkeys: users.map((profile) => profile.pubkey) };

const variablesOf = (query: string) => ({
  ...(query.includes('$ids') ? { ids: VARIABLES.ids } : {}),
  ...(query.includes('$replyIds') ? { replyIds: replies.map((reply) => reply.id) } : {}),
  ...(query.includes('$pubkeys') ? { pubkeys: VARIABLES.pubkeys } : {}),
});

async function cpuOf(query: string): Promise<{ cpuMs: number; status: number; body: string }> {
  let best = { cpuMs: Number.POSITIVE_INFINITY, status: 0, body: '' };
  // The least of several runs: what the work costs, less what the machine added (a GC, a timer).
  for (let run = 0; run < 5; run++) {
    const before = process.cpuUsage();
    const response = await fetch(`${context.server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables: variablesOf(query) }),
    });
    const body = await response.text();
    const used = process.cpuUsage(before);
    const cpuMs = (used.user + used.system) / 1000;
    if (cpuMs < best.cpuMs) best = { cpuMs, status: response.status, body };
  }
  return best;
}

describe('the cost model is calibrated: every field, run on full lists, costs at most its charge in CPU', () => {
  it('every field that is not a scalar of its parent has an explicit cost, and every type a way to reach it', () => {
    const missing: string[] = [];
    for (const [name, query] of probes()) {
      const [type, field] = name.split('.') as [string, string];
      const fieldType = (schema.getType(type) as { getFields(): Record<string, { type: Parameters<typeof getNamedType>[0] }> }).getFields()[field]!.type;
      if (!isLeafType(getNamedType(fieldType)) && !(name in FIELD_COSTS)) missing.push(`${name}: no cost in FIELD_COSTS`);
      if (query === '') missing.push(`${name}: no way to reach ${type} in REACH`);
    }
    expect(missing).toEqual([]);
  });

  it(`each field: CPU ≤ an empty request's + ${CPU_PER_UNIT_US} µs per unit charged + ${SLACK_MS} ms`, async () => {
    // The least a request costs: one event by id.
    const smallest = `{ event(id: "${root.id}") { id } }`;
    await cpuOf(smallest);
    const emptyAtStart = (await cpuOf(smallest)).cpuMs;
    const over: string[] = [];
    const figures: string[] = [];
    for (const [name, query] of probes()) {
      await cpuOf(query); // warm: compiled once, loaders and caches as a steady service has them
      const cost = operationCost(schema, parse(query), undefined, variablesOf(query), LIMITS);
      // The empty request measured again beside each field: a machine slower for a while (a CI
      // running other files) slows both, where one baseline from the start left a field 5 ms over.
      const measure = async () => {
        const measured = await cpuOf(query);
        const empty = Math.max(emptyAtStart, (await cpuOf(smallest)).cpuMs);
        return { ...measured, empty, allowed: empty + (CPU_PER_UNIT_US * cost) / 1000 + SLACK_MS };
      };
      let measured = await measure();
      // Over once: measured again, the lesser kept (a field over its charge is over both times; a
      // machine busy with other work for a moment put Profile.picture 1.6 ms over, once).
      if (measured.cpuMs > measured.allowed) {
        const again = await measure();
        if (again.cpuMs - again.allowed < measured.cpuMs - measured.allowed) measured = again;
      }
      const { cpuMs, status, body, empty, allowed } = measured;
      expect([name, status, body.includes('"errors"') ? body.slice(0, 300) : '']).toEqual([name, 200, '']);
      figures.push(`${name.padEnd(32)} cost ${String(cost).padStart(7)}  cpu ${cpuMs.toFixed(1).padStart(6)} ms  ${((1000 * (cpuMs - empty)) / cost).toFixed(1).padStart(6)} µs/unit`);
      if (process.env.COST_FIGURES) console.log(figures.at(-1));
      if (cpuMs > allowed) over.push(`${name}: ${cpuMs.toFixed(1)} ms for ${cost} units (allowed ${allowed.toFixed(1)} ms)`);
    }
    expect(over).toEqual([]);
  }, 240_000);
});

const STATS = 'stats { replies threadReplies quotes reposts reactions { pubkeys likes dislikes byContent { content pubkeys } } zaps { count msats senders pending } }';
const aliased = (count: number, selection: string) => Array.from({ length: count }, (_, n) => `a${n}: ${selection}`).join(' ');

/** What a client draws every day: costs the README states. */
const SCREENS = {
  thread: `query ($id: String!) { event(id: $id) { json author { name picture nip05 } ${STATS}
      parent { json author { name picture } } root { json author { name picture } }
      replies(first: 20) { edges { cursor node { json author { name picture nip05 } ${STATS} } } pageInfo { hasNextPage endCursor } } } }`,
  profilePage: `query ($pubkey: String!) { profile(pubkey: $pubkey) { pubkey name displayName about picture banner website nip05 lud16
      nip05Verification { status } followersCount followingCount zapsReceived { count msats }
      notes(first: 20) { edges { cursor node { json ${STATS} } } pageInfo { hasNextPage endCursor } } } }`,
};

/** The requests a review measured at 340–1,940 ms of CPU, each accepted by the model they were sent to. */
const ATTACKS = {
  parentsAndRoots: `query ($ids: [String!]!) { events(ids: $ids) { ${aliased(7, `parent { parent { ${STATS} } } root { ${STATS} }`)} } }`,
  followersOfFollowers: `{ profile(pubkey: "${star}") { followers(first: 100) { edges { profile { followers(first: 100) { edges { profile { name about } } } } } } } }`,
  searchThenFollowers: '{ searchProfiles(query: "a", first: 100) { followers(first: 100) { edges { profile { name } } } } }',
  rootReactions: `query ($ids: [String!]!) { events(ids: $ids) { ${aliased(14, 'root { stats { reactions { byContent { content pubkeys } } } }')} } }`,
};

describe('what the model says of the screens and of the requests that cost seconds', () => {
  const costOf = (query: string, variables: Record<string, unknown> = {}) => operationCost(schema, parse(query), undefined, variables, LIMITS);

  it('a thread view and a profile page cost a few hundred units, far under GRAPHQL_MAX_COST (20,000)', () => {
    expect(costOf(SCREENS.thread, { id: root.id })).toBe(THREAD_COST);
    expect(costOf(SCREENS.profilePage, { pubkey: star })).toBe(PROFILE_PAGE_COST);
  });

  it('each request the review measured at seconds of CPU is over 20,000 and refused before it runs: 400 query_too_costly', async () => {
    const ids = deeper.map((event) => event.id);
    for (const [name, query] of Object.entries(ATTACKS)) {
      const variables = query.includes('$ids') ? { ids } : {};
      expect([name, costOf(query, variables) > 20_000]).toEqual([name, true]);
    }
    const strict = await startTestServer(context.store.store, { graphql: { maxCost: 20_000 } });
    try {
      const send = (query: string) =>
        fetch(`${strict.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables: query.includes('$ids') ? { ids } : {} }),
        });
      for (const [name, query] of Object.entries(ATTACKS)) {
        await (await send(query)).text();
        const before = process.cpuUsage();
        const response = await send(query);
        const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
        const used = process.cpuUsage(before);
        expect([name, response.status, body.errors?.map((error) => error.extensions?.code)]).toEqual([name, 400, ['query_too_costly']]);
        // Refused before anything is read: what it cost is its parse and validation (tens of ms for
        // seven aliases of deep selections) and a walk of the document.
        expect([name, (used.user + used.system) / 1000 < 100]).toEqual([name, true]);
      }
    } finally {
      await strict.close();
    }
  });

  it('notificationCounts(trusted: true) is charged the web and every notification it may read and judge (2,000, at an event read each), over the counts kept in the index', () => {
    const counts = (trusted: boolean) => costOf(`{ pubkey(pubkey: "${star}") { notificationCounts(trusted: ${trusted}) { total } } }`);
    expect(counts(true) - counts(false)).toBe(100 + 2000 * 2);
  });

  it('stats(viewer:) is charged the web each, and the 2,000 events counts by trust may read in a request once, however many ask', () => {
    const stats = (viewer: string) => costOf(`{ event(id: "${'a'.repeat(64)}") { stats${viewer} { replies } } }`);
    expect(stats(`(viewer: "${star}")`) - stats('')).toBe(100 + 2000 * 2);
    // Twenty replies' stats share the request's 2,000 (schema/trust.ts countByTrust): one web each.
    const page = (viewer: string) => costOf(`{ event(id: "${'a'.repeat(64)}") { replies(first: 20) { edges { node { stats${viewer} { replies } } } } } }`);
    expect(page(`(viewer: "${star}")`) - page('')).toBe(20 * 100 + 2000 * 2);
    // With notificationCounts(trusted: true) in the same request: still once.
    const both = costOf(`{ event(id: "${'a'.repeat(64)}") { stats(viewer: "${star}") { replies } } pubkey(pubkey: "${star}") { notificationCounts(trusted: true) { total } } }`);
    const neither = costOf(`{ event(id: "${'a'.repeat(64)}") { stats { replies } } pubkey(pubkey: "${star}") { notificationCounts { total } } }`);
    expect(both - neither).toBe(2 * 100 + 2000 * 2);
  });
});
