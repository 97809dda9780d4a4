import { createHash } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { GuardedFetcher } from '../net/guarded-fetch.js';
import type { MarkStore } from '../store/mark-store.js';
import { askPayEndpoint, type LnurlProviderAnswer, lnurlPayEndpoint } from './lnurl-provider.js';
import { timeoutSignal } from '../abortable.js';

/**
 * The provider check of zaps, kept per recipient in the store, shared by every
 * instance: the answer of the recipient's LNURL pay endpoint (the key that signs its receipts, or a
 * definite no), for the `lud16`/`lud06` value its profile names now. A read is answered from what
 * the store holds, never waiting for an endpoint: a recipient never checked, or whose profile now
 * names another endpoint, is *pending* until a check in the background ends; one checked more than
 * ZAP_PROVIDER_TTL ago keeps its answer while it is checked again. Checks are claimed once across
 * instances (a mark) and capped per process, as NIP-05 verifications are.
 */

export interface ZapProviderConfig {
  /** ZAP_PROVIDER_TTL: how long an answer is used before it is checked again (it is used meanwhile). */
  ttlSeconds: number;
  /**
   * The longest an exchange with a pay endpoint may take (NIP05_TIMEOUT_MS: the same kind of
   * exchange, through the same fetcher, whose settings are NIP-05's).
   */
  timeoutMs: number;
}

/** What a recipient's receipts are, by their signer: counted when signed by `provider`, else not; or all pending. */
export type ProviderVerdict = { provider: string } | { refused: string } | 'pending';

/** The mark holding a recipient's last answer (its note: encodeAnswer). */
export const zapProviderMarkKey = (pubkey: string) => `zap-provider:${pubkey}`;
/** The claim to check a recipient's endpoint: once per CLAIM_SECONDS across instances. */
const claimKey = (pubkey: string, endpoint: string) => `zap-provider-check:${pubkey}:${endpoint}`;

/** Answers are kept this long (checked again once per ZAP_PROVIDER_TTL while read). */
const KEPT_SECONDS = 30 * 86400;
/** A check that got no answer (a timeout, a 5xx) is tried again after this, by whichever instance reads first. */
const CLAIM_SECONDS = 60;
/** Checks at once in this process; a recipient read past it is checked on a later read. */
const MAX_CHECKS_IN_FLIGHT = 32;

interface StoredAnswer {
  /** Which endpoint answered: a hash of the profile's field and value (a lud06 may be 2 KB). */
  endpoint: string;
  checkedAt: number;
  answer: { nostrPubkey: string } | { refused: string };
}

/** An endpoint's identity in marks: 16 hex digits of SHA-256 of `<field>:<value>`. */
function endpointId(field: string, value: string): string {
  return createHash('sha256').update(`${field}:${value}`).digest('hex').slice(0, 16);
}

/** `<endpoint> <checkedAt> k <pubkey>` or `<endpoint> <checkedAt> r <reason>`: one line (mark notes hold no newline). */
function encodeAnswer({ endpoint, checkedAt, answer }: StoredAnswer): string {
  return 'nostrPubkey' in answer ? `${endpoint} ${checkedAt} k ${answer.nostrPubkey}` : `${endpoint} ${checkedAt} r ${answer.refused.replace(/\s+/g, ' ')}`;
}

function decodeAnswer(note: string | null): StoredAnswer | undefined {
  if (!note) return undefined;
  const match = /^([0-9a-f]{16}) (\d+) ([kr]) (.*)$/.exec(note);
  if (!match) return undefined;
  const [, endpoint, at, kind, rest] = match as unknown as [string, string, string, string, string];
  const checkedAt = Number(at);
  if (!Number.isSafeInteger(checkedAt)) return undefined;
  if (kind === 'k') return /^[0-9a-f]{64}$/.test(rest) ? { endpoint, checkedAt, answer: { nostrPubkey: rest } } : undefined;
  return { endpoint, checkedAt, answer: { refused: rest } };
}

/** The profile fields that name a pay endpoint. */
export type LudFields = { lud16: string | null; lud06: string | null };

/**
 * The verdict for a recipient whose profile's metadata is `metadata` (null: no profile held), given
 * its stored note (zapProviderMarkKey, read in batches by the loaders), and the check that is due,
 * if one is: none held for the endpoint the profile names now, or one older than `ttlSeconds`.
 */
export function readVerdict(metadata: LudFields | null, note: string | null, ttlSeconds: number): { verdict: ProviderVerdict; due?: { endpoint: string; url: URL } } {
  if (metadata === null) return { verdict: { refused: 'no profile' } };
  const endpoint = lnurlPayEndpoint(metadata);
  if ('refused' in endpoint) return { verdict: endpoint };
  const id = endpointId(endpoint.field, endpoint.value);
  const stored = decodeAnswer(note);
  const current = stored?.endpoint === id ? stored : undefined;
  const due = !current || Math.floor(Date.now() / 1000) - current.checkedAt >= ttlSeconds ? { endpoint: id, url: endpoint.url } : undefined;
  const verdict: ProviderVerdict = !current ? 'pending' : 'nostrPubkey' in current.answer ? { provider: current.answer.nostrPubkey } : current.answer;
  return { verdict, ...(due ? { due } : {}) };
}

export class ZapProviders {
  private readonly checking = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();

  /** `fetcher`: the service's one guarded fetcher, NIP-05's (its slots and connections shared). */
  constructor(private readonly deps: { marks: MarkStore; logger: Logger; config: ZapProviderConfig; fetcher: GuardedFetcher }) {}

  /**
   * The verdict for a recipient (readVerdict), scheduling a check in the background when one is due.
   */
  verdict(pubkey: string, metadata: LudFields | null, note: string | null): ProviderVerdict {
    const { verdict, due } = readVerdict(metadata, note, this.deps.config.ttlSeconds);
    if (due) this.checkInBackground(pubkey, due.endpoint, due.url);
    return verdict;
  }

  /** Ends exchanges under way and waits for the checks (before the store closes); the fetcher's owner closes its connections. */
  async close(): Promise<void> {
    this.shutdown.abort();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private checkInBackground(pubkey: string, endpoint: string, url: URL): void {
    if (this.shutdown.signal.aborted || this.checking.has(pubkey) || this.checking.size >= MAX_CHECKS_IN_FLIGHT) return;
    this.checking.add(pubkey);
    const run = this.check(pubkey, endpoint, url)
      .catch((error: unknown) => this.deps.logger.debug({ err: error }, 'zap provider check failed'))
      .finally(() => {
        this.checking.delete(pubkey);
        this.running.delete(run);
      });
    this.running.add(run);
  }

  private async check(pubkey: string, endpoint: string, url: URL): Promise<void> {
    const { marks, config } = this.deps;
    const [mine] = await marks.claim([claimKey(pubkey, endpoint)], CLAIM_SECONDS);
    if (!mine) return;
    const timeout = timeoutSignal(config.timeoutMs);
    // endsAt is on performance.now()'s clock, as Deadline says.
    const deadline = { signal: AbortSignal.any([timeout, this.shutdown.signal]), endsAt: performance.now() + config.timeoutMs };
    const answer: LnurlProviderAnswer = await askPayEndpoint(this.deps.fetcher, url, deadline, true);
    // No answer (a timeout, a 5xx, no slot): what is held stays; the claim's expiry allows another try.
    if ('unavailable' in answer) return;
    const stored = encodeAnswer({ endpoint, checkedAt: Math.floor(Date.now() / 1000), answer });
    await marks.set([zapProviderMarkKey(pubkey)], Math.max(KEPT_SECONDS, 2 * config.ttlSeconds), [stored]);
  }
}
