import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { eventOfWireForm, type NostrEvent, rememberSerialized } from '../nostr/event.js';
import { rememberFollowKeys } from '../nostr/follows.js';
import { type InvalidReason, nostrEventOf, type Verdict, verifyNostrEvent } from '../nostr/verify-event.js';

/**
 * What the main thread sends a verification thread: per input, the JSON text it was parsed from
 * when there is one (the thread parses it again: one copy of a string crosses far cheaper than a
 * parsed follow list of a thousand tags, whose postMessage was 6 % of the main thread's busy time
 * in a follow-list import), else the parsed value.
 */
export interface VerifyRequest {
  id: number;
  inputs: VerifyInput[];
  /** The bytes of the inputs given as bytes, one after the other (moved, not copied). */
  wires?: ArrayBuffer;
}

/** `wire`: an UNPARSED input given as its bytes, where they are in the request's `wires`. */
export type VerifyInput = { text: string; unparsed?: true } | { wire: [offset: number, length: number] } | { value: unknown };

/** What an input is read from: the JSON text its value was parsed from, or for an UNPARSED one its text or its UTF-8 bytes. */
export type InputSource = string | Uint8Array | undefined;

/**
 * In place of a value: not parsed on the main thread (readEventInput's `object-line`); its text (or
 * its bytes, decoded as UTF-8) is parsed where it is verified, and if it is not JSON its verdict is
 * UNREADABLE.
 */
export const UNPARSED: unique symbol = Symbol('not parsed');

/** The verdict of an UNPARSED input whose text is not JSON (counted as an unreadable line). */
export type Unreadable = { ok: false; reason: 'unreadable'; field?: undefined };
export type ImportVerdict = Verdict | Unreadable;

/** verifyNostrEvent of a value, or of an UNPARSED input's text or bytes (unreadable if it is not JSON). */
export function verifyInput(value: unknown, source: InputSource): ImportVerdict {
  if (value !== UNPARSED) return verifyNostrEvent(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof source === 'string' ? source : Buffer.from((source as Uint8Array).buffer, (source as Uint8Array).byteOffset, (source as Uint8Array).byteLength).toString('utf8'));
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  return verifyNostrEvent(parsed);
}

/**
 * Its answer: per input, null (valid) or why not; and per valid input what storing it takes from
 * its whole body, made there beside the check: its wire form (serializeEvent's; absent when it is
 * the text sent, or the bytes sent are its UTF-8) and, for a follow list, its follows as bytes
 * (followKeysOf's).
 */
export interface VerifyReply {
  id: number;
  verdicts: ({ reason: InvalidReason | 'unreadable'; field?: string } | null)[];
  prepared: (Prepared | null)[];
}

/** `head`: for an UNPARSED input, the event but its tags (read from the wire form when asked: eventOfWireForm). */
export interface Prepared {
  json?: string;
  follows?: Uint8Array;
  head?: Omit<NostrEvent, 'tags'>;
}

/** At most this many verification threads: past it, the store's writes are the limit. */
const MAX_THREADS = 4;

/**
 * Signature verification for `import` on threads of its own. Verifying is most of an import's CPU
 * (a Schnorr check per event); on the main thread it left the store's writes waiting for it and the
 * other cores idle (BENCHMARKS.md, Ingest). A batch goes to the least busy thread as a structured
 * copy and comes back as verdicts; the main thread keeps its own parsed values and builds the events
 * from them, so only reasons cross back (an UNPARSED input's event comes back but its tags, which
 * are read from its wire form when asked). Threads: one per core but the one the main thread and the
 * store use, at least one, at most MAX_THREADS. Without a thread (none could start), batches are
 * verified on the main thread, as before.
 */
export class VerifyPool {
  private readonly workers: { worker: Worker; inFlight: number }[] = [];
  private readonly waiting = new Map<number, { values: unknown[]; texts: readonly InputSource[]; resolve(verdicts: ImportVerdict[]): void; reject(error: Error): void }>();
  private nextId = 0;

  constructor(threads = Math.min(MAX_THREADS, Math.max(1, availableParallelism() - 1))) {
    const script = workerScript();
    if (!script) return;
    for (let index = 0; index < threads; index++) {
      const worker = new Worker(script.code, { eval: script.eval });
      const slot = { worker, inFlight: 0 };
      worker.on('message', (reply: VerifyReply) => {
        slot.inFlight--;
        const waiting = this.waiting.get(reply.id);
        if (!waiting) return;
        this.waiting.delete(reply.id);
        try {
          if (reply.verdicts.length !== waiting.values.length) throw new Error('a verification thread answered another number of verdicts than inputs');
          waiting.resolve(
            reply.verdicts.map((verdict, index): ImportVerdict => {
              if (verdict !== null) return { ok: false, ...verdict } as ImportVerdict;
              const prepared = reply.prepared[index];
              const json = prepared?.json ?? (prepared ? waiting.texts[index] : undefined);
              const value = waiting.values[index];
              if (value === UNPARSED) {
                const head = prepared?.head;
                if (!head || json === undefined) throw new Error('a verification thread answered an unparsed input without its event');
                const event = eventOfWireForm(head, json);
                if (prepared.follows) rememberFollowKeys(event, prepared.follows);
                return { ok: true, event };
              }
              const event = nostrEventOf(value as Record<string, unknown>);
              if (typeof json === 'string') rememberSerialized(event, json);
              if (prepared?.follows) rememberFollowKeys(event, prepared.follows);
              return { ok: true, event };
            }),
          );
        } catch (error) {
          waiting.reject(error as Error);
        }
      });
      // A thread that fails fails the batches it holds (the import stops with the error: nothing is stored unverified).
      worker.on('error', (error) => this.failAll(error));
      // A thread gone is never sent another batch (one sent to it would never be answered).
      worker.on('exit', () => {
        const at = this.workers.indexOf(slot);
        if (at >= 0) this.workers.splice(at, 1);
        this.failAll(new Error('a verification thread stopped'));
      });
      this.workers.push(slot);
    }
  }

  /**
   * The verdict of every value (verifyNostrEvent's), in order. `texts[i]`, where given, is the JSON
   * text `values[i]` was parsed from: the thread parses it rather than receive a copy of the value.
   * A value UNPARSED stands for `texts[i]` not parsed at all, a text or its UTF-8 bytes
   * (verifyInput's verdict); a valid one given as bytes keeps them as its wire form when they are
   * its wire form's UTF-8 (eventOfWireForm), so that they are what the store writes.
   */
  verify(values: unknown[], texts: readonly InputSource[] = []): Promise<ImportVerdict[]> {
    const onMainThread = () => values.map((value, index) => verifyInput(value, texts[index]));
    const slot = this.workers.reduce<(typeof this.workers)[number] | undefined>((least, next) => (least && least.inFlight <= next.inFlight ? least : next), undefined);
    if (!slot) return Promise.resolve(onMainThread());
    const id = this.nextId++;
    const verdicts = new Promise<ImportVerdict[]>((resolve, reject) => this.waiting.set(id, { values, texts, resolve, reject }));
    try {
      // Inputs given as bytes are copied one after the other into one buffer, moved to the thread:
      // a Buffer sent alone is copied with the whole of the memory it sits in.
      let wireBytes = 0;
      for (const [index, value] of values.entries()) {
        const text = texts[index];
        if (value === UNPARSED && typeof text !== 'string') wireBytes += (text as Uint8Array).byteLength;
      }
      const wires = wireBytes > 0 ? new Uint8Array(wireBytes) : undefined;
      let at = 0;
      const inputs = values.map((value, index): VerifyInput => {
        const text = texts[index];
        if (value === UNPARSED && typeof text !== 'string') {
          const bytes = text as Uint8Array;
          wires?.set(bytes, at);
          at += bytes.byteLength;
          return { wire: [at - bytes.byteLength, bytes.byteLength] };
        }
        if (value === UNPARSED) return { text: text as string, unparsed: true };
        return typeof text === 'string' ? { text } : { value };
      });
      const request: VerifyRequest = wires ? { id, inputs, wires: wires.buffer } : { id, inputs };
      slot.worker.postMessage(request, wires ? [wires.buffer] : []);
    } catch {
      // A value the structured copy refuses (nested past its depth): this batch on the main thread.
      this.waiting.delete(id);
      return Promise.resolve(onMainThread());
    }
    slot.inFlight++;
    return verdicts;
  }

  /** Whether batches are verified on threads of their own (else on the main thread). */
  get threads(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
    this.workers.length = 0;
    this.failAll(new Error('verification stopped'));
  }

  private failAll(error: Error): void {
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}

/**
 * The thread's script: the compiled one beside this module; run from the TypeScript sources (tests,
 * scripts under tsx), the source itself, loaded through tsx's loader registered in the thread.
 */
function workerScript(): { code: string; eval: boolean } | undefined {
  const compiled = fileURLToPath(new URL('./verify-worker.js', import.meta.url));
  if (existsSync(compiled)) return { code: compiled, eval: false };
  const source = new URL('./verify-worker.ts', import.meta.url);
  if (!existsSync(fileURLToPath(source))) return undefined;
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source.href)}); });`;
  return { code, eval: true };
}
