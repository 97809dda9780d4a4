/**
 * Whose follow or mute lists changed (kind 3 and 10000: stored, replaced, deleted, vanished), in
 * the order the store applied them: what a reader's web of trust is built from (nostr/web-of-trust.ts),
 * so that a web held in memory (schema/trust-webs.ts) is dropped by the next read after one of its
 * lists changed, by any writer. Each store keeps the last LIST_CHANGES_KEPT changes (Redis: a stream
 * in one slot; the embedded store: numbered entries), appended on every transition the relation
 * index applies to such a list (relate/apply), and on Redis again by a replay that finds the list
 * stored (a write whose reply was lost may have stored it without logging it): a change seen twice
 * drops a web once more, never keeps one that is stale; a web is also built again after a while
 * (store/trust-webs.ts MAX_WEB_AGE_MS). A rebuild's clear keeps the log (it changes no list).
 */

/** Changes kept: a reader further behind than this learns only that anything may have changed. */
export const LIST_CHANGES_KEPT = 10_000;

/** The changes after a cursor, and the cursor to ask from next. */
export type ListChanges =
  | { readonly cursor: string; readonly pubkeys: readonly string[] }
  /** The log no longer reaches back to the cursor, or the cursor is not one of its own: any list may have changed. */
  | { readonly cursor: string; readonly all: true };

export interface ListChangeLog {
  /**
   * The authors whose lists changed after `after` (a cursor from an earlier answer), each once or
   * more; `after` null: none, only the cursor of now.
   */
  listChanges(after: string | null): Promise<ListChanges>;
}

/** Kinds whose changes are logged: the lists a web of trust is made of. */
export const LOGGED_LIST_KINDS: ReadonlySet<number> = new Set([3, 10_000]);
