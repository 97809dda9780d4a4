/**
 * What one event may make us do. Anyone can sign an event of a megabyte made of a hundred
 * thousand junk tags, mentions or JSON keys, and a relay hint makes us store it; every rule that
 * reads an event's tags or content stops at these caps, so the work a stored event can cause is
 * bounded whatever it holds. Real events stay far below them. docs/configuration.md lists them ("What one
 * request may cost").
 */

/**
 * Tags read by a rule that walks an event's tags (relevant pubkeys, relay lists), at most: MAX_TAGS,
 * for events stored by an earlier version that had more.
 */
export const MAX_TAGS_READ = 2000;

/**
 * `nostr:npub…`/`nostr:nprofile…` mentions decoded in one event's content, valid or not, at most
 * (each is a bech32 decode: 13,000 junk mentions were 100 ms per read).
 */
export const MAX_MENTIONS_READ = 200;

/**
 * A kind 0 whose content is longer than this (UTF-16 units) has no metadata fields (they read as
 * null); the event itself is still served as signed. Parsing 900 KB of `{}` took 120 ms, 64 KiB
 * takes about 1 ms; strfry refuses events over 64 KiB by default, so real profiles are below it.
 */
export const MAX_METADATA_CHARS = 64 * 1024;

/** `r` tags of a relay list (NIP-65) read, at most, whatever their values. */
export const MAX_RELAY_LIST_TAGS_READ = 500;

/**
 * The largest event we verify and store, in bytes of its id's preimage (NIP-01 serialisation).
 * Relays cap events lower by default (strfry 64 KiB, nostr-rs-relay 128 KB), long-form articles
 * stay well below, and the wasm verifier cannot hash more than 945,596 bytes at all (measured: it
 * answered bad_signature). A request reading a hundred events by id reads at most 100 × this.
 * Larger ones are refused as `too_large`.
 */
export const MAX_EVENT_BYTES = 256 * 1024;

/**
 * The most tags an event may have (strfry's maxNumTags default): 300,000 empty tags fit in 900 KB
 * and cost a JSON parse far above their bytes. More are refused as `too_many_tags`.
 */
export const MAX_TAGS = 2000;

/**
 * The largest profile (kind 0) or relay list (kind 10002) we store, likewise: these are read on
 * lookups of their author, not only when asked for by id; metadata over MAX_METADATA_CHARS could not
 * be read anyway, and `/event` reads up to MAX_PROFILES profiles per request (100 × 64 KiB, not
 * 100 × 900 KB). A real relay list is a few hundred bytes.
 */
export const MAX_PROFILE_BYTES = 64 * 1024;

/**
 * Bytes the stored form of an event (seven fields, store/stored-event.ts) may have beyond its id's
 * preimage: the id, the signature and the field names. A stored profile or relay list longer than
 * MAX_PROFILE_BYTES plus this was stored by an earlier version: it is not parsed (no metadata, no
 * write relays).
 */
export const STORED_FORM_OVERHEAD = 512;

/**
 * A reaction's content longer than this, in UTF-8 bytes of its JSON text (escapes included: 256
 * control characters are 1,538 bytes), still counts its author as a reactor but has no `byContent`
 * entry of its own: NIP-25 contents are `+`, `-` or an emoji, and every distinct content is kept
 * beside its target (a thousand reactions of 256 KiB each would be 256 MB of one note's index).
 */
export const MAX_REACTION_CONTENT_BYTES = 256;

/**
 * A zap receipt (NIP-57, kind 9735) whose `description` tag is longer than this, in UTF-8 bytes, is
 * not a zap. The description is the zap request (a kind 9734 event) as JSON: a few hundred bytes
 * with its relays, and its hash is what the invoice commits to; validating one means hashing it,
 * parsing it and verifying its signature, so a receipt signed by anyone must not make that 256 KiB
 * of work. 64 KiB is strfry's default event cap: no relay-published zap request is larger.
 */
export const MAX_ZAP_DESCRIPTION_BYTES = 64 * 1024;

/**
 * A zap receipt whose `bolt11` invoice is longer than this (characters) is not a zap. Invoices are
 * made to fit a QR code (4,296 characters at most) and zap invoices, which carry a description
 * hash instead of a description, are a few hundred; decoding costs about 0.2 ms per 1,000
 * characters (light-bolt11-decoder, measured), so an anyone-signed receipt cannot make it cost more
 * than a millisecond.
 */
export const MAX_BOLT11_CHARS = 4096;

/**
 * `word` entries of a mute list (NIP-51 kind 10000) read, at most, and the longest word read (in
 * UTF-16 units, after NFKC and lower case; a longer one is skipped, not cut: cut, it would hide more
 * than its author asked). Every word is a substring search of each event's content where the mutes
 * apply (a feed page reads up to FEED_SCAN_LIMIT events): 100 words over 256 KiB of content is
 * about 2 ms at worst, real lists hold a few words of a few letters.
 */
export const MAX_MUTE_WORDS = 100;
export const MAX_MUTE_WORD_CHARS = 100;
