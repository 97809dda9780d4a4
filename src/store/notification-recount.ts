import type { NostrEvent } from '../nostr/event.js';
import { directReasonsOf, NOTIFICATION_TYPES, type NotificationType, reasonToken, targetReasonsOf } from '../nostr/notifications.js';
import { compareNotes } from './relation-index.js';
import type { NotificationEntry } from './notification-index.js';

/**
 * Every recipient's notifications computed from scratch, from the servable events alone (DESIGN
 * "Screens": each event once per recipient, with the first type that fits), by a reading that
 * shares the rule (nostr/notifications.ts) but none of the stores' bookkeeping (no tokens, no
 * tombstones, no inbound records): what `relations check` holds the maintained index against.
 */
export function recountNotifications(servable: readonly NostrEvent[]): Map<string, NotificationEntry[]> {
  const authorOf = new Map<string, string>();
  for (const event of servable) authorOf.set(event.id, event.pubkey);
  const byRecipient = new Map<string, NotificationEntry[]>();
  const seen = new Set<string>();
  for (const event of servable) {
    if (seen.has(event.id)) continue;
    seen.add(event.id);
    // recipient → its candidates (type, token), any order
    const candidates = new Map<string, { type: NotificationType; token: string }[]>();
    const candidate = (recipient: string | undefined, type: NotificationType, token: string) => {
      if (recipient === undefined || recipient === event.pubkey) return;
      const list = candidates.get(recipient) ?? [];
      candidates.set(recipient, list);
      list.push({ type, token });
    };
    for (const reason of directReasonsOf(event)) candidate(reason.recipient, reason.type, reasonToken(reason));
    for (const reason of targetReasonsOf(event)) candidate(authorOf.get(reason.target), reason.type, reasonToken(reason));
    for (const [recipient, list] of candidates) {
      // The first type that fits; among reasons of that type (two quoted events of one author), the first token.
      list.sort((a, b) => NOTIFICATION_TYPES.indexOf(a.type) - NOTIFICATION_TYPES.indexOf(b.type) || (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
      const first = list[0] as { type: NotificationType; token: string };
      const entries = byRecipient.get(recipient) ?? [];
      byRecipient.set(recipient, entries);
      entries.push({ id: event.id, createdAt: event.created_at, type: first.type, token: first.token });
    }
  }
  for (const entries of byRecipient.values()) entries.sort(compareNotes);
  return byRecipient;
}
