import type { GraphiQLOptions } from 'graphql-yoga';

/**
 * GraphiQL served whole by the service: `@graphql-yoga/render-graphiql` inlines its
 * scripts, styles and editor workers into the page, so nothing is fetched from a CDN and the page
 * works offline. yoga's default page loads all of that from unpkg.com, which shows a blank
 * "Loading…" page without internet.
 */

/** What GraphiQL opens with: this service's two questions, on events of the sample (README). */
export const GRAPHIQL_EXAMPLE_QUERY = `# Nostr lookup: events with the profiles of their people, and profiles.
# Event ids: hex, note1…, nevent1… or naddr1…; pubkeys: hex, npub1…, nprofile1… or a NIP-05 name@domain.
# The ids below are in the sample (npx nostr-lookup import sample/events.jsonl).
# Press the run button (or Ctrl-Enter).
# (No operation name: GraphiQL would send a stale one with a query typed over this one in a hurry.)

{
  event(id: "note16lptvzfanhar73ftsuw63vefpfppt8dke5yylutme4kxuf0u9grqly6uq3") {
    id
    kind
    createdAt
    content
    author {
      name
      displayName
    }
    relevantProfiles {
      pubkey
      displayName
      nip05
      nip05Verification {
        status
      }
    }
  }
  profile(pubkey: "npub1zuuajd7u3sx8xu92yav9jwxpr839cs0kc3q6t56vd5u9q033xmhsk6c2uc") {
    name
    about
    picture
    nip05
  }
}
`;

export const GRAPHIQL_TITLE = 'Nostr lookup — GraphiQL';

const pages = new Map<string, Promise<string>>();

/**
 * The page, rendered once per set of options (about 9 MB: the whole GraphiQL bundle): building the
 * string per request would cost more than any lookup. The bundle is loaded on the first request for
 * the page, not at start: with GraphiQL off (production) it is never loaded, and loaded it costs
 * the process well over 100 MB of memory (measured in the long fuzz run: 357 → 190 MB of growth).
 */
export function renderOfflineGraphiQL(options: GraphiQLOptions): Promise<string> {
  const key = JSON.stringify(options ?? {});
  let page = pages.get(key);
  if (page === undefined) {
    page = import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => renderGraphiQL(options));
    pages.set(key, page);
  }
  return page;
}
