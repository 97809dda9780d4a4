import type { FastifyPluginCallback } from 'fastify';
import Negotiator from 'negotiator';
import type { EventStore } from '../../store/event-store.js';
import { type IndexSummary, summarizeIndex } from '../../store/index-summary.js';
import { PACKAGE_VERSION } from '../../version.js';
import { DOCUMENTATION_ONLY, HOME_SCHEMA } from '../openapi/schemas.js';
import { JSON_TYPE } from '../reply.js';

/** What GET / lists: every route a client or an operator may start from, with one line on each. */
export const HOME_ROUTES: Readonly<Record<string, string>> = {
  '/user-profile?pubkey=…': 'the latest profile (kind 0) of a pubkey',
  '/event?id=…': 'an event with the profiles of its people',
  '/thread?id=…': 'a thread screen: the event, its parents, a page of replies, stats and profiles',
  '/feed?pubkey=…': "a page of a pubkey's home feed",
  '/notifications?pubkey=…': 'a page of what happened to a pubkey',
  '/graphql': 'the GraphQL API (GraphiQL in a browser, where enabled)',
  '/docs': 'the REST API, its parameters, answers and errors (OpenAPI: /openapi.json)',
  '/healthz': 'liveness',
  '/readyz': 'readiness: the store answers',
  '/metrics': 'Prometheus metrics (where enabled)',
};

/** The manual, for a reader of the page (it is in the repository, not served). */
const MANUAL = 'docs/ in the repository: api.md, relationships.md, screens.md, filling.md, configuration.md, operations.md';

const escaped = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The page a browser gets: what this is, what it holds, where to go. Self-contained (no script, no outside request). */
export function homePage(index: IndexSummary | null): string {
  const routes = Object.entries(HOME_ROUTES)
    .map(([path, what]) => {
      const shown = escaped(path);
      // Routes without parameters are links; the others are shown as they are asked.
      return `<li>${path.includes('?') ? `<code>${shown}</code>` : `<a href="${shown}"><code>${shown}</code></a>`}: ${escaped(what)}</li>`;
    })
    .join('\n');
  const held = index
    ? `<p id="held">The index holds <strong>${index.events.toLocaleString('en')}</strong> events, <strong>${index.profiles.toLocaleString('en')}</strong> profiles, <strong>${index.followLists.toLocaleString('en')}</strong> follow lists naming <strong>${index.follows.toLocaleString('en')}</strong> follows, and <strong>${index.notifications.toLocaleString('en')}</strong> notifications${index.storedBytes === null ? '' : ` (${(index.storedBytes / 1_000_000).toFixed(1)} MB)`}.</p>`
    : '<p id="held">The store does not answer right now: how much the index holds is unknown (see <a href="/readyz"><code>/readyz</code></a>).</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nostr-lookup</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}li{margin:.3em 0}</style>
</head>
<body>
<h1>nostr-lookup <small>${escaped(PACKAGE_VERSION)}</small></h1>
<p>A Nostr event and profile lookup service over plain HTTP: events with the profiles of their people, profiles by pubkey, threads, feeds and notifications, as signed Nostr events in JSON.</p>
${held}
<h2>Routes</h2>
<ul>
${routes}
</ul>
<p>Try <a href="/graphql">GraphiQL</a> for the GraphQL API and <a href="/docs">/docs</a> for the REST routes. The manual: ${escaped(MANUAL)}.</p>
</body>
</html>
`;
}

/** The summary, or null when the store does not answer (the page still says where to go). */
async function summaryOrNull(store: EventStore): Promise<IndexSummary | null> {
  try {
    return await summarizeIndex(store);
  } catch {
    return null;
  }
}

/**
 * GET / → for a browser (Accept prefers text/html), a page; for anyone else, `{"service", "version",
 * "routes", "index"}`: a newcomer who opens the service's address is told what it is, what it holds
 * and where to go, rather than answered a bare 404. `index` is how full the index is (kept counters:
 * two store reads), null while the store does not answer. LANDING=false leaves the route out.
 */
export const homeRoute: FastifyPluginCallback<{ store: EventStore }> = (app, { store }, done) => {
  app.get('/', { schema: HOME_SCHEMA, ...DOCUMENTATION_ONLY }, async (request, reply) => {
    const index = await summaryOrNull(store);
    const html = new Negotiator(request).mediaType(['application/json', 'text/html']) === 'text/html';
    reply.header('cache-control', 'no-store').header('vary', 'accept');
    if (html) return reply.header('content-type', 'text/html; charset=utf-8').send(homePage(index));
    return reply.header('content-type', JSON_TYPE).send(JSON.stringify({ service: 'nostr-lookup', version: PACKAGE_VERSION, routes: HOME_ROUTES, index }));
  });
  done();
};
