import { AbstractRelay } from 'nostr-tools/abstract-relay';
import type { WebSocket as WsSocket } from 'ws';
import type { Logger } from '../logger.js';
import type { NostrEvent } from '../nostr/event.js';
import { verifyNostrEvent } from '../nostr/verify-event.js';
import { relaySocket } from './relay-socket.js';
import { relayUrlForLog } from './relay-url.js';

/**
 * NIP-01 verification for relay connections. nostr-tools asks `verify` for a boolean and then hands
 * `onevent` the event as received; `get` returns the verified seven-field copy of that same object,
 * or undefined if it did not verify.
 */
export class VerifiedEvents {
  private readonly verified = new WeakMap<object, NostrEvent>();

  readonly verify = (raw: unknown): boolean => {
    const verdict = verifyNostrEvent(raw);
    if (verdict.ok) this.verified.set(raw as object, verdict.event);
    return verdict.ok;
  };

  get(raw: unknown): NostrEvent | undefined {
    return this.verified.get(raw as object);
  }
}

/**
 * A relay connection (not yet connected) as the pool and `sync` use it: events verified through
 * `verified`, every message screened before nostr-tools parses it (message-screen.ts: only answers
 * to an open subscription are parsed; a relay that keeps sending what answers nothing is cut off,
 * and `onFlood` is told), notices logged at debug, and WebSocket pings, so that a connection that
 * died without closing (a dropped route, a sleeping NAT) is closed within a minute and redialled.
 * `publicOnly`: a learned relay, dialled at public addresses only (relay-socket.ts).
 */
export function openRelay(
  url: string,
  { verified, logger, publicOnly = false, onFlood }: { verified: VerifiedEvents; logger: Logger; publicOnly?: boolean; onFlood?: () => void },
): AbstractRelay {
  const hooks = {
    isOpen: (id: string): boolean => relay.openSubs.has(id),
    onFlood: () => {
      // Debug: the URL may be a stranger's (a hint); the pool's RelayHealth logs the rest it gets.
      logger.debug({ relay: relayUrlForLog(url) }, 'relay kept sending what answers no open subscription; connection closed');
      onFlood?.();
    },
  };
  const relay: AbstractRelay = new AbstractRelay(url, {
    verifyEvent: verified.verify,
    websocketImplementation: relaySocket({ publicOnly, hooks }) as unknown as typeof WebSocket,
    enablePing: true,
  });
  relay.onnotice = (notice) => logger.debug({ relay: relayUrlForLog(url), notice: String(notice).slice(0, 200) }, 'relay notice');
  return relay;
}

/**
 * Stops (true) or starts again (false) reading a relay's connection: what it sends waits in TCP's
 * buffers, then the relay's, so a reader behind a slow store holds a bounded amount (relay-sync.ts).
 * nostr-tools keeps its socket to itself; ws' pause() stops reading it.
 */
export function pauseReading(relay: AbstractRelay, paused: boolean): void {
  const socket = (relay as unknown as { ws?: WsSocket }).ws;
  if (paused) socket?.pause();
  else socket?.resume();
}
