import type { Nip05Config } from '../config/env.js';
import { LookupError } from '../errors.js';
import { acrossInstances } from '../fill/instance-claims.js';
import type { Logger } from '../logger.js';
import { ClientSlots, clientKey } from '../client-key.js';
import { isLowerHex64, type Nip05Name } from '../nostr/identifiers.js';
import { parseRelayUrl } from '../relays/relay-url.js';
import { type MarkStore, nip05NameMarkKey } from '../store/mark-store.js';
import type { MissLimit } from '../fill/relay-request.js';
import type { GuardedFetcher } from '../net/guarded-fetch.js';
import { answeredByDomain, type Deadline, fetchNostrJson, type NostrJsonAnswer } from './fetch-nostr-json.js';
import { warnStoreFailure } from '../store/store-failure.js';
import { timeoutSignal } from '../abortable.js';

/** A domain's answer about a name, and when it was given (seconds since the epoch). */
export interface Nip05Resolution {
  answer: NostrJsonAnswer;
  checkedAt: number;
}

export interface Nip05ResolverDependencies {
  marks: MarkStore;
  logger: Logger;
  config: Nip05Config;
  /** The service's one guarded fetcher (LNURL checks share it: its slots and connections). */
  fetcher: GuardedFetcher;
}

export interface ResolveOptions {
  /** The client's address: resolutions under way are capped per client. Absent: not capped (background checks). */
  client?: string;
  /** The most this caller waits, in ms (its request's deadline); NIP05_TIMEOUT_MS at most. */
  waitMs?: number;
  /** MISS_RATE_LIMIT, when set: a name its domain must be asked for takes one from the client's allowance. */
  missLimit?: MissLimit;
}

/**
 * NIP-05 resolutions as the relay lookups are kept: cached in the store for every instance (a name
 * found for NIP05_TTL, not found or unresolvable for NEGATIVE_TTL), coalesced in the process (one
 * exchange per identifier at a time) and across instances (one claims it, the others read its
 * result from the store), and limited per client as relay misses are (a client sending random
 * names must not turn us into a crawler of other people's domains): MISS_CONCURRENCY_PER_CLIENT at
 * once, MISS_RATE_LIMIT over time. Exchanges are capped in all and per domain by the fetcher.
 */
export class Nip05Resolver {
  private readonly inflight = new Map<string, Promise<Nip05Resolution>>();
  private readonly byClient = new ClientSlots();
  /**
   * Per client and name, the resolution it has under way (its admission, and how many of its
   * requests wait for it): more requests of the same name take no more of the client's cap or
   * allowance (they cost the domain nothing more), and share the first one's admission. Ten at once
   * from one client were 429 past the eighth, or not, as their store reads interleaved.
   */
  private readonly byClientName = new Map<string, { admitted: Promise<void>; holders: number }>();
  /** Ends every exchange at shutdown. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: Nip05ResolverDependencies) {}

  /**
   * The domain's answer about `name`: from the store while cached, else asked (or awaited from
   * whoever asks already). Store failures throw (store_unavailable); past the per-client cap,
   * LookupError('too_many_requests'); past MISS_RATE_LIMIT, LookupError('rate_limited'). Never
   * caches a wait cut short by the caller's deadline.
   */
  async resolve(name: Nip05Name, options: ResolveOptions = {}): Promise<Nip05Resolution> {
    const [note] = await this.deps.marks.notes([nip05NameMarkKey(name.identifier)]);
    const cached = decodeResolution(note ?? null);
    if (cached) return cached;
    const waitMs = Math.min(options.waitMs ?? Infinity, this.deps.config.timeoutMs);
    // No client: a background verification, which gets a share of the fetcher's slots and no place in line.
    return this.perClient(name, options, () => this.shared(name, waitMs, options.client === undefined));
  }

  /** Stops exchanges under way (their callers get "unresolvable"); the fetcher's owner closes its connections. */
  close(): void {
    this.closing.abort();
  }

  private async perClient<T>(name: Nip05Name, { client, missLimit }: ResolveOptions, run: () => Promise<T>): Promise<T> {
    if (client === undefined) return run();
    const key = clientKey(client);
    const held = `${key} ${name.identifier}`;
    const underWay = this.byClientName.get(held);
    if (underWay) {
      underWay.holders += 1;
      try {
        await underWay.admitted;
        return await run();
      } finally {
        this.release(held, key);
      }
    }
    if (!this.byClient.enter(key, this.deps.config.maxPerClient)) throw new LookupError('too_many_requests');
    let admit = () => {};
    let refuse: (error: unknown) => void = () => {};
    const admitted = new Promise<void>((resolve, reject) => {
      admit = resolve;
      refuse = reject;
    });
    admitted.catch(() => {}); // awaited by the requests that join, if any
    this.byClientName.set(held, { admitted, holders: 1 });
    try {
      // One name to ask is one key of the allowance, as one id is on the relay path (ReadThrough.perClient).
      const limit = missLimit ? await missLimit(key, 1) : undefined;
      if (limit && limit.admitted < 1) throw new LookupError('rate_limited', { retryAfterSeconds: limit.retryAfterSeconds });
      admit();
      return await run();
    } catch (error) {
      refuse(error); // no-op once admitted
      throw error;
    } finally {
      this.release(held, key);
    }
  }

  /** One request of `held` is done; the client's slot is free once all of them are. */
  private release(held: string, key: string): void {
    const underWay = this.byClientName.get(held);
    if (!underWay || --underWay.holders > 0) return;
    this.byClientName.delete(held);
    this.byClient.leave(key);
  }

  /** Joins the exchange under way for this identifier, or starts one; waits at most `waitMs`. */
  private shared(name: Nip05Name, waitMs: number, background: boolean): Promise<Nip05Resolution> {
    let running = this.inflight.get(name.identifier);
    if (!running) {
      running = this.askOnce(name, background).finally(() => this.inflight.delete(name.identifier));
      this.inflight.set(name.identifier, running);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(resolutionNow(unresolvable('timeout'))), waitMs);
      running.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }

  /** One exchange for all instances: claimed in the store, its result cached there. */
  private async askOnce(name: Nip05Name, background: boolean): Promise<Nip05Resolution> {
    const { config, marks, logger } = this.deps;
    const endsAt = performance.now() + config.timeoutMs;
    const deadline = AbortSignal.any([timeoutSignal(config.timeoutMs), this.closing.signal]);
    const settled = await acrossInstances(
      [name.identifier],
      nip05NameMarkKey,
      {
        marks,
        logger,
        claimSeconds: Math.ceil(config.timeoutMs / 1000),
        readSettled: async (keys) => (await marks.notes(keys.map(nip05NameMarkKey))).map((note) => decodeResolution(note)),
        unsettled: resolutionNow(unresolvable('timeout')),
        signal: deadline,
      },
      async () => new Map([[name.identifier, await this.ask(name, { signal: deadline, endsAt }, background)]]),
    );
    return settled.get(name.identifier) ?? resolutionNow(unresolvable('timeout'));
  }

  private async ask(name: Nip05Name, deadline: Deadline, background: boolean): Promise<Nip05Resolution> {
    const { config, marks, logger } = this.deps;
    const answer = await fetchNostrJson(this.deps.fetcher, name, deadline, background);
    const resolution = resolutionNow(answer);
    if (answer.kind === 'unresolvable') logger.debug({ reason: answer.reason }, 'NIP-05 name could not be resolved');
    // Shutdown, or no slot free in time, is no answer about the domain: not remembered.
    if (this.closing.signal.aborted || !answeredByDomain(answer)) return resolution;
    const ttl = answer.kind === 'found' ? config.ttlSeconds : config.negativeTtlSeconds;
    try {
      await marks.set([nip05NameMarkKey(name.identifier)], ttl, [encodeResolution(resolution)]);
    } catch (error) {
      warnStoreFailure(logger, error, 'could not cache a NIP-05 resolution in the store');
    }
    return resolution;
  }
}

function unresolvable(reason: string): NostrJsonAnswer {
  return { kind: 'unresolvable', reason };
}

function resolutionNow(answer: NostrJsonAnswer): Nip05Resolution {
  return { answer, checkedAt: Math.floor(Date.now() / 1000) };
}

/**
 * A resolution as a mark's note (one line): `<checkedAt> found <pubkey> <relay>…`,
 * `<checkedAt> not_found` or `<checkedAt> unresolvable` (the reason is for the log only).
 */
export function encodeResolution({ answer, checkedAt }: Nip05Resolution): string {
  if (answer.kind === 'found') return [checkedAt, 'found', answer.pubkey, ...answer.relays].join(' ');
  return `${checkedAt} ${answer.kind}`;
}

/** Reads a note back; undefined for none, or for anything this version did not write (asked again). */
export function decodeResolution(note: string | null | undefined): Nip05Resolution | undefined {
  if (!note) return undefined;
  const [at, kind, pubkey, ...relays] = note.split(' ');
  const checkedAt = Number(at);
  if (!Number.isSafeInteger(checkedAt) || checkedAt < 0) return undefined;
  if (kind === 'not_found' && pubkey === undefined) return { answer: { kind: 'not_found' }, checkedAt };
  if (kind === 'unresolvable' && pubkey === undefined) return { answer: unresolvable('cached'), checkedAt };
  if (kind !== 'found' || pubkey === undefined || !isLowerHex64(pubkey)) return undefined;
  const urls = relays.map((relay) => parseRelayUrl(relay)).filter((url): url is string => url !== undefined);
  return { answer: { kind: 'found', pubkey, relays: urls }, checkedAt };
}
