import { isReplaceableKind } from '../../nostr/kinds.js';
import { notePlace, type ReplyPosition, replyMemberBytes, replyPositionOfBytes } from '../relation-index.js';
import { addressOfMember, authorIndexMember } from '../tombstones.js';

/**
 * An author's one list in Redis (keys.ts `author`): both its notes (`Profile.notes`) and the author
 * index that a request to vanish reads (NIP-62 removes every event of the pubkey). One sorted set
 * per author, all scores 0, read by lexical ranges; a key costs about 100 bytes before it holds
 * anything, and most authors write a few events, so one key serves both.
 *
 * - An event of a regular or addressable kind: the kind (2 bytes), then its place (replyMemberBytes
 *   of notePlace: newest first, then by id, then its size): 45 bytes. Added and removed with the
 *   event's relations (redis-relation-index.ts `relate`), so exactly once per transition; written
 *   again by a `duplicate` put where missing (`ensureListed`), and checked by `relations rebuild`.
 * - A replaceable or addressable address the author has written to: ADDRESS_MARK, then
 *   authorIndexMember. Written by the event store with every version (they share it) and never
 *   removed: every later request to vanish bars the address again.
 *
 * A place's first byte is at most 0x1f (created_at mirrored from 2^53 − 1), so every event member
 * sorts below ADDRESS_MARK, and a kind's range ends before its third byte reaches 0x20.
 */
const ADDRESS_MARK = Buffer.from([0xff, 0xff, 0xff]);

/**
 * Whether an event of this kind has a member: every kind but the replaceable ones (which have
 * their address). The notes (nostr/relationships.ts isNoteKind), and what is no one's notes but its
 * signer's events all the same, for a request to vanish: zap receipts (`notes` refuses kind 9735),
 * and ephemeral events, which the service never stores but the store would keep if given.
 */
export function isListedKind(kind: number): boolean {
  return !isReplaceableKind(kind);
}

export function kindBytes(kind: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(kind);
  return bytes;
}

export function eventMember(kind: number, position: ReplyPosition): Buffer {
  return Buffer.concat([kindBytes(kind), replyMemberBytes(notePlace(position))]);
}

export function addressMember(address: string, pubkey: string): Buffer {
  return Buffer.concat([ADDRESS_MARK, Buffer.from(authorIndexMember(address, pubkey))]);
}

/** What a member names: an event (its kind and place) or an address. */
export function readMember(member: Buffer, pubkey: string): { kind: number; position: ReplyPosition } | { address: string } | undefined {
  if (member.subarray(0, 3).equals(ADDRESS_MARK)) {
    const address = addressOfMember(member.toString('utf8', 3), pubkey);
    return address === undefined ? undefined : { address };
  }
  if (member.length !== 45) return undefined;
  return { kind: member.readUInt16BE(0), position: notePlace(replyPositionOfBytes(member.subarray(2))) };
}

/** BYLEX bounds of one kind's events, from just past `after`'s place (exclusive whatever its size) or from the newest. */
export function kindRange(kind: number, after: ReplyPosition | null): [start: Buffer, end: Buffer] {
  const prefix = kindBytes(kind);
  const start = after
    ? Buffer.concat([Buffer.from('('), prefix, replyMemberBytes(notePlace({ createdAt: after.createdAt, id: after.id }))])
    : Buffer.concat([Buffer.from('['), prefix]);
  return [start, Buffer.concat([Buffer.from('('), prefix, Buffer.from([0x20])])];
}

/** The BYLEX bound below every address member: `ZREMRANGEBYLEX key - EVENTS_END` removes the events only. */
export const EVENTS_END = Buffer.concat([Buffer.from('('), ADDRESS_MARK]);

/** The BYLEX bound from which the address members start. */
export const ADDRESSES_START = Buffer.concat([Buffer.from('['), ADDRESS_MARK]);
