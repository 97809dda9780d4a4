import { isRelayMessage, MESSAGE_HEAD_CHARS, readMessageHead } from './relay-message.js';

/**
 * Traffic that answers none of our open subscriptions, allowed per REQ we send: after this much
 * since our last REQ, the connection is closed and its relay rests (issue 31 finding 2). Room for a
 * whole answer still in flight when we close a subscription early (500 keys, their events and relay
 * lists), far below a flood: one message of the largest size (2 MiB) is already past it.
 */
export const UNASKED_MAX_BYTES = 1024 * 1024;
export const UNASKED_MAX_MESSAGES = 1000;

/**
 * A NOTICE or AUTH is handed on (parsed) only up to this size: nostr-tools logs a notice (we keep
 * 200 characters of it) and stores a challenge; a longer one is dropped unread, and counted.
 */
const MAX_CHATTER_BYTES = 1024;

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
 *   (relay-message.ts), then handed on (one of the wrong shape counts as below);
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

  constructor(private readonly hooks: ScreenHooks) {}

  /** We sent a REQ: the relay may again send a budget's worth that answers nothing. */
  asked(): void {
    this.unaskedBytes = 0;
    this.unaskedMessages = 0;
  }

  /** The message's text if nostr-tools should read it, or undefined (dropped). */
  admit(data: Buffer, isBinary: boolean): string | undefined {
    if (this.flooded) return undefined;
    // Only the front is decoded to find the type and id: MESSAGE_HEAD_CHARS characters take at most
    // 4 bytes each in UTF-8 (a character cut at the end lies past anything the scan needs).
    const head = isBinary ? undefined : readMessageHead(data.toString('utf8', 0, Math.min(data.length, MESSAGE_HEAD_CHARS * 4)));
    const answer = head !== undefined && ANSWERS.has(head.type) && head.id !== undefined && this.hooks.isOpen(head.id);
    if (answer) {
      const text = data.toString('utf8');
      if (isRelayMessage(text)) return text;
    }
    this.unaskedBytes += data.length;
    this.unaskedMessages += 1;
    if (this.unaskedBytes > UNASKED_MAX_BYTES || this.unaskedMessages > UNASKED_MAX_MESSAGES) {
      this.flooded = true;
      this.hooks.onFlood();
      return undefined;
    }
    if (answer || !head || !CHATTER.has(head.type) || data.length > MAX_CHATTER_BYTES) return undefined;
    const text = data.toString('utf8');
    return isRelayMessage(text) ? text : undefined;
  }
}
