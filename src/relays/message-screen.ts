import { badField } from '../nostr/verify-event.js';
import { MAX_EVENT_BYTES } from '../nostr/work-caps.js';
import { isRelayMessage, MESSAGE_HEAD_CHARS, readMessageHead, relayMessageOf } from './relay-message.js';

/**
 * Traffic that answers none of our open subscriptions, allowed per REQ we send: after this much
 * since our last REQ, the connection is closed and its relay rests. Room for a
 * whole answer still in flight when we close a subscription early (500 keys, their events and relay
 * lists), far below a flood: one message of the largest size (2 MiB) is already past it.
 */
export const UNASKED_MAX_BYTES = 1024 * 1024;
export const UNASKED_MAX_MESSAGES = 1000;

/** The budget is also renewed this long after it last was, REQ or not (sync holds one REQ for hours). */
export const UNASKED_WINDOW_MS = 60_000;

/**
 * A NOTICE or AUTH is handed on (parsed) only up to this size: nostr-tools logs a notice (we keep
 * 200 characters of it) and stores a challenge; a longer one is dropped unread, and counted.
 */
const MAX_CHATTER_BYTES = 1024;

/**
 * An EVENT message larger than this cannot hold an event we would store (MAX_EVENT_BYTES of
 * preimage, written with at most twice its bytes by a relay that escapes more, plus the id, the
 * signature and the envelope): dropped unparsed, and counted.
 */
export const MAX_EVENT_MESSAGE_BYTES = 2 * MAX_EVENT_BYTES + 4096;

/**
 * A subscription we closed ourselves may still be answered for a while (the answer was in flight):
 * its messages are dropped unparsed, and not counted, this long after our CLOSE (found by review:
 * two honest relays asked for large events, the slower one's answer in flight after our CLOSE made
 * it "flood" and rest).
 */
export const CLOSED_GRACE_MS = 10_000;

/** Subscriptions closed by us remembered per connection, at most (the pool opens 10 at once). */
const CLOSED_REMEMBERED = 256;

/** Messages that answer a subscription, by the id they name. */
const ANSWERS = new Set(['EVENT', 'EOSE', 'CLOSED']);
/** Messages that answer nothing of ours, but that nostr-tools reads (a notice, a NIP-42 challenge). */
const CHATTER = new Set(['NOTICE', 'AUTH']);

export interface ScreenHooks {
  /** Whether `id` names a subscription open on this connection now (nostr-tools' openSubs). */
  isOpen(id: string): boolean;
  /** The connection sent past its budget: it is being closed (terminated) now. */
  onFlood(): void;
}

/**
 * What one relay connection may hand nostr-tools, decided before anything is parsed:
 * - a message for an open subscription (EVENT, EOSE, CLOSED naming it) is parsed and shape-checked
 *   (relay-message.ts; an EVENT's fields too, and one over MAX_EVENT_MESSAGE_BYTES is not parsed),
 *   then handed on (one of the wrong shape counts as below);
 * - a message for a subscription we closed less than CLOSED_GRACE_MS ago is dropped unparsed and
 *   not counted (an answer in flight), unless it is an EVENT over MAX_EVENT_MESSAGE_BYTES;
 * - everything else (for a closed or never-opened subscription, NOTICE, AUTH, OK, COUNT, binary
 *   frames, garbage) counts against the connection's budget of unasked traffic, and is dropped
 *   unparsed, save a short NOTICE or AUTH.
 * The id is read by a bounded scan of the message's first bytes (readMessageHead), so a message
 * dropped costs that scan, whatever its size; ws has already capped the size (2 MiB).
 */
export class MessageScreen {
  private unaskedBytes = 0;
  private unaskedMessages = 0;
  private flooded = false;
  private windowStartedAt = Date.now();
  /** Subscriptions we closed, by id: when. */
  private readonly closedByUs = new Map<string, number>();

  constructor(private readonly hooks: ScreenHooks) {}

  /** We sent a CLOSE for `id`: what still answers it for CLOSED_GRACE_MS is dropped, uncounted. */
  closed(id: string): void {
    this.closedByUs.delete(id);
    this.closedByUs.set(id, Date.now());
    if (this.closedByUs.size > CLOSED_REMEMBERED) this.closedByUs.delete(this.closedByUs.keys().next().value as string);
  }

  /** Whether `id` is a subscription we closed less than CLOSED_GRACE_MS ago. */
  private recentlyClosed(id: string): boolean {
    const at = this.closedByUs.get(id);
    return at !== undefined && Date.now() - at < CLOSED_GRACE_MS;
  }

  /** We sent a REQ: the relay may again send a budget's worth that answers nothing. */
  asked(): void {
    this.unaskedBytes = 0;
    this.unaskedMessages = 0;
    this.windowStartedAt = Date.now();
  }

  /**
   * Counts what answers nothing of ours without a message to read (a WebSocket ping, which ws
   * answers with a pong): false once the connection is cut off.
   */
  unasked(bytes: number): boolean {
    if (this.flooded) return false;
    // A long-lived connection (sync's, one REQ for hours) gets its budget anew every UNASKED_WINDOW_MS:
    // a notice a minute must not cut it off after a day (found by review).
    if (Date.now() - this.windowStartedAt > UNASKED_WINDOW_MS) this.asked();
    this.unaskedBytes += bytes;
    this.unaskedMessages += 1;
    if (this.unaskedBytes > UNASKED_MAX_BYTES || this.unaskedMessages > UNASKED_MAX_MESSAGES) {
      this.flooded = true;
      this.hooks.onFlood();
      return false;
    }
    return true;
  }

  /** The message's text if nostr-tools should read it, or undefined (dropped). */
  admit(data: Buffer, isBinary: boolean): string | undefined {
    if (this.flooded) return undefined;
    // Only the front is decoded to find the type and id: MESSAGE_HEAD_CHARS characters take at most
    // 4 bytes each in UTF-8 (a character cut at the end lies past anything the scan needs).
    const head = isBinary ? undefined : readMessageHead(data.toString('utf8', 0, Math.min(data.length, MESSAGE_HEAD_CHARS * 4)));
    // An answer (EVENT, EOSE, CLOSED naming a subscription), unless an EVENT too large for any event we store.
    const answering = head?.id !== undefined && ANSWERS.has(head.type) && !(head.type === 'EVENT' && data.length > MAX_EVENT_MESSAGE_BYTES);
    const answer = answering && this.hooks.isOpen(head.id as string);
    if (answer) {
      const text = data.toString('utf8');
      const message = relayMessageOf(text);
      // An EVENT whose fields lack NIP-01's shapes goes no further: nostr-tools' filter match throws
      // on tags that are not lists, and writes the event to stderr (found by review).
      if (message && (message[0] !== 'EVENT' || badField(message[2] as Record<string, unknown>) === undefined)) return text;
    } else if (answering && this.recentlyClosed(head.id as string)) {
      return undefined;
    }
    if (!this.unasked(data.length)) return undefined;
    if (answer || !head || !CHATTER.has(head.type) || data.length > MAX_CHATTER_BYTES) return undefined;
    const text = data.toString('utf8');
    return isRelayMessage(text) ? text : undefined;
  }
}
