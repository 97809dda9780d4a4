import type { Readable } from 'node:stream';
import type { NostrEvent } from '../nostr/event.js';
import { isEphemeralKind } from '../nostr/kinds.js';
import { type ImportVerdict, type InputSource, UNPARSED, verifyInput, VerifyPool } from './verify-pool.js';
import { backoffMs, sleep } from '../backoff.js';
import { type EventStore, StoreUnavailableError, type WriteOutcome } from '../store/event-store.js';
import { readEventInput } from './read-event-input.js';

export interface ImportSummary {
  /** Candidate events read (each event of a relay message or an array counts once). */
  read: number;
  stored: number;
  replaced: number;
  superseded: number;
  duplicate: number;
  /** Valid events the store refused one by one (counted and skipped; the log says why). */
  rejected: number;
  /** Ephemeral kinds (NIP-01, 20000–29999) are valid but not meant to be stored. */
  ephemeral: number;
  /** Deletion requests (NIP-09) and requests to vanish (NIP-62) that were new, and applied. */
  applied: number;
  /** Events refused because their authors deleted them or asked to vanish (whichever came first). */
  deleted: number;
  /** Events refused by verification, by reason (`bad_signature`, `bad_id`, `bad_field:sig`…). */
  invalid: Record<string, number>;
  /** Lines that are not JSON. */
  unreadableLines: number;
  /** The first few unreadable line numbers, to find them. */
  unreadableExamples: number[];
  /** Relay messages that carry no event (EOSE, NOTICE, OK…). */
  ignoredMessages: number;
}

export interface ImportOptions {
  /** Events written per store call. */
  batchSize?: number;
  /** Attempts per batch while the store is unavailable (a timeout, a full disk), with backoff. */
  writeAttempts?: number;
  /** Told of each failed attempt that will be retried. */
  onRetry?(attempt: number, waitMs: number, error: unknown): void;
  /** Called after each batch is written, with the running summary. */
  onProgress?(summary: Readonly<ImportSummary>): void;
}

export function emptySummary(): ImportSummary {
  return {
    read: 0,
    stored: 0,
    replaced: 0,
    superseded: 0,
    duplicate: 0,
    rejected: 0,
    ephemeral: 0,
    applied: 0,
    deleted: 0,
    invalid: {},
    unreadableLines: 0,
    unreadableExamples: [],
    ignoredMessages: 0,
  };
}

/**
 * Imports events from a stream: every event is verified (NIP-01 id and signature) before it may be
 * written; bad lines and bad events are counted, never stored, and never stop the import. Writes go
 * in batches, and the next batch is verified (on threads of its own: verify-pool.ts) while the
 * previous one is being written.
 * Rejects only if the input cannot be read or the store fails.
 */
export async function importEvents(
  input: Readable,
  store: EventStore,
  { batchSize = 500, onProgress, writeAttempts = WRITE_ATTEMPTS, onRetry }: ImportOptions = {},
): Promise<ImportSummary> {
  const summary = emptySummary();
  let batch: NostrEvent[] = [];
  let writing: Promise<void> = Promise.resolve();
  // A failed write is kept here (not left as an unhandled rejection) and rethrown at the next wait.
  let writeFailure: { error: unknown } | undefined;
  const waitForWrites = async () => {
    await writing;
    if (writeFailure) throw writeFailure.error;
  };

  const count = (outcomes: WriteOutcome[]) => {
    for (const outcome of outcomes) summary[outcome]++;
    onProgress?.(summary);
  };
  const flush = async () => {
    const events = batch;
    batch = [];
    await waitForWrites(); // at most one batch in flight: bounded memory, ordered writes
    writing = withRetries(() => store.putEvents(events), writeAttempts, onRetry).then(count, (error: unknown) => {
      writeFailure = { error };
    });
  };

  // Verification (most of an import's CPU) on threads of its own once the input is larger than one
  // verification batch (a few events are not worth starting threads for); batches are handed on in
  // the order they were read, at most VERIFYING_AHEAD of them at once.
  let pool: VerifyPool | undefined;
  let unverified: unknown[] = [];
  let unverifiedTexts: InputSource[] = [];
  let unverifiedLines: number[] = [];
  let unverifiedBytes = 0;
  const verifying: { verdicts: Promise<ImportVerdict[]>; lines: number[]; bytes: number }[] = [];
  let bytesAhead = 0;
  const unreadable = (line: number) => {
    summary.unreadableLines++;
    // The first few by line number (lines parsed where they are verified are told of later).
    const examples = summary.unreadableExamples;
    if (examples.length < 10 || line < (examples.at(-1) as number)) {
      examples.push(line);
      examples.sort((a, b) => a - b);
      examples.length = Math.min(examples.length, 10);
    }
  };
  const take = async (verdicts: ImportVerdict[], lines: readonly number[]) => {
    for (const [index, verdict] of verdicts.entries()) {
      if (!verdict.ok && verdict.reason === 'unreadable') {
        // Counted as read when read, before it was known not to be JSON (a progress report in
        // between counted it among those read).
        summary.read--;
        unreadable(lines[index] as number);
        continue;
      }
      if (!verdict.ok) {
        const reason = verdict.field ? `${verdict.reason}:${verdict.field}` : verdict.reason;
        summary.invalid[reason] = (summary.invalid[reason] ?? 0) + 1;
        continue;
      }
      if (isEphemeralKind(verdict.event.kind)) {
        summary.ephemeral++;
        continue;
      }
      batch.push(verdict.event);
      if (batch.length >= batchSize) await flush();
    }
  };
  const takeOldest = async () => {
    const oldest = verifying.shift() as (typeof verifying)[number];
    bytesAhead -= oldest.bytes;
    await take(await oldest.verdicts, oldest.lines);
  };
  const verifyUnverified = async (last: boolean) => {
    const values = unverified;
    const texts = unverifiedTexts;
    const lines = unverifiedLines;
    const bytes = unverifiedBytes;
    unverified = [];
    unverifiedTexts = [];
    unverifiedLines = [];
    unverifiedBytes = 0;
    if (!pool && last) return take(values.map((value, index) => verifyInput(value, texts[index])), lines);
    pool ??= new VerifyPool();
    const verdicts = pool.verify(values, texts);
    // Awaited below, in order; a failure meanwhile must not be an unhandled rejection.
    verdicts.catch(() => {});
    verifying.push({ verdicts, lines, bytes });
    bytesAhead += bytes;
    // Bounded by count and by the bytes they were read from (large events: fewer at once).
    while (verifying.length > (last ? 0 : VERIFYING_AHEAD) || bytesAhead > MAX_BYTES_AHEAD) await takeOldest();
  };

  try {
    for await (const item of readEventInput(input, { deferObjectLines: true })) {
      if (item.type === 'unreadable') {
        unreadable(item.line);
        continue;
      }
      if (item.type === 'ignored') {
        summary.ignoredMessages++;
        continue;
      }
      summary.read++;
      unverified.push(item.type === 'object-line' ? UNPARSED : item.value);
      unverifiedTexts.push(item.type === 'object-line' ? item.wire : item.text);
      unverifiedLines.push(item.line);
      unverifiedBytes += item.bytes;
      if (unverified.length >= VERIFY_BATCH || unverifiedBytes >= MAX_BATCH_BYTES) await verifyUnverified(false);
    }
    await verifyUnverified(true);
  } finally {
    await pool?.close();
  }
  if (batch.length > 0) await flush();
  await waitForWrites();
  return summary;
}

/** Inputs verified together on a thread: large enough that handing them over costs little. */
const VERIFY_BATCH = 256;
/**
 * Batches being verified while the next is read: enough to keep the threads busy while the main
 * thread writes a batch (on LMDB the write runs on the main thread: a batch of 500 follow lists is
 * 36 MB, about a second), bounded memory.
 */
const VERIFYING_AHEAD = 32;
/** A verification batch is sent once its inputs were read from this many bytes, whatever their count. */
const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/** At most this many bytes of input are being verified at once (parsed, and copied to a thread): about one batch of follow lists. */
const MAX_BYTES_AHEAD = 40 * 1024 * 1024;

/** A batch is tried this many times while the store is unavailable: 1+2+4+8+16 s of waiting. */
const WRITE_ATTEMPTS = 6;
const LONGEST_WAIT_MS = 16_000;

/**
 * A write retried with backoff while the store is unavailable (transient: a command timeout under
 * load, Redis restarting, a disk briefly full). Writes are idempotent (NIP-01 rule, duplicates), so
 * a retry after a write that did land changes nothing.
 */
async function withRetries<T>(
  write: () => Promise<T>,
  attempts: number,
  onRetry?: (attempt: number, waitMs: number, error: unknown) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || attempt >= attempts) throw error;
      const wait = backoffMs(attempt, LONGEST_WAIT_MS);
      onRetry?.(attempt, wait, error);
      await sleep(wait);
    }
  }
}

/** The summary as people read it. */
export function formatSummary(summary: ImportSummary): string {
  const invalidTotal = Object.values(summary.invalid).reduce((sum, n) => sum + n, 0);
  const reasons = Object.entries(summary.invalid)
    .sort(([, a], [, b]) => b - a)
    .map(([reason, n]) => `    ${reason}: ${n}`);
  const lines = [
    `read:        ${summary.read} events`,
    `stored:      ${summary.stored}`,
    `replaced:    ${summary.replaced} (newer version of a replaceable event)`,
    `superseded:  ${summary.superseded} (older than the version held; not stored)`,
    `duplicate:   ${summary.duplicate}`,
    `rejected:    ${summary.rejected}${summary.rejected > 0 ? ' (refused by the store; not stored)' : ''}`,
    `ephemeral:   ${summary.ephemeral} (kinds 20000-29999; not stored)`,
    `applied:     ${summary.applied} deletion requests and requests to vanish (NIP-09, NIP-62)`,
    `deleted:     ${summary.deleted} (deleted by their authors; not stored)`,
    `invalid:     ${invalidTotal}${invalidTotal > 0 ? ' (not stored)' : ''}`,
    ...reasons,
    `unreadable:  ${summary.unreadableLines} lines${
      summary.unreadableExamples.length > 0 ? ` (e.g. line ${summary.unreadableExamples.join(', ')})` : ''
    }`,
    `ignored:     ${summary.ignoredMessages} relay messages without an event`,
  ];
  return lines.join('\n');
}
