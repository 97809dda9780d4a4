import type { Nip05Config } from '../config/env.js';
import type { Logger } from '../logger.js';
import { parseNip05Name } from '../nostr/identifiers.js';
import { type MarkStore, nip05CheckMarkKey, nip05VerificationMarkKey } from '../store/mark-store.js';
import { answeredByDomain } from './fetch-nostr-json.js';
import type { Nip05Resolver } from './nip05-resolver.js';
import { warnStoreFailure } from '../store/store-failure.js';

/**
 * Whether a profile's self-declared `nip05` holds: its domain's nostr.json maps the name to the
 * profile's pubkey (VERIFIED), to another pubkey or to nothing (MISMATCH), or the domain could not
 * be asked (UNREACHABLE); NOT_CHECKED until a first check has ended.
 */
export type Nip05Status = 'VERIFIED' | 'MISMATCH' | 'UNREACHABLE' | 'NOT_CHECKED';

export interface Nip05Verification {
  status: Nip05Status;
  /** When the domain was asked (seconds since the epoch); null when it was not. */
  checkedAt: number | null;
}

/** A check's result is kept this long (re-checked once per NIP05_TTL when read): a profile read rarely keeps its status. */
const KEPT_SECONDS = 30 * 86400;

/**
 * Checks running at once in this process, at most; a profile read past it is checked on a later
 * read. Their exchanges are capped besides, with every resolution's (NIP05_MAX_CONCURRENT, per domain).
 */
const MAX_CHECKS_IN_FLIGHT = 32;

const STATUSES: ReadonlySet<string> = new Set(['VERIFIED', 'MISMATCH', 'UNREACHABLE']);

interface StoredVerification {
  identifier: string;
  status: Exclude<Nip05Status, 'NOT_CHECKED'>;
  checkedAt: number;
}

/**
 * Verification in the background: a read is answered from what the store holds, never
 * waiting for a domain; a profile whose declared identifier was never checked, or was checked more
 * than NIP05_TTL ago, is checked after the read, at most once per NIP05_TTL per pubkey and
 * identifier across every instance sharing the store (a claim mark). The check is a resolution
 * (nip05-resolver.ts): a name a client has just resolved is verified without asking again.
 */
export class Nip05Verifier {
  private readonly checking = new Set<string>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: { marks: MarkStore; resolver: Nip05Resolver; logger: Logger; config: Nip05Config },
  ) {}

  /**
   * What to show for a profile that declares `declared` (its metadata's nip05), given its stored
   * note (the mark `nip05VerificationMarkKey(pubkey)`, read in batches by the loaders); null when it
   * declares none. Schedules a check when one is due.
   */
  verdict(pubkey: string, declared: string | null, note: string | null): Nip05Verification | null {
    if (declared === null || declared.trim() === '') return null;
    // Not an identifier at all (`bob`, `bob@`, a URL): no domain can vouch for it.
    const name = parseNip05Name(declared, { bareDomain: true });
    if (!name) return { status: 'MISMATCH', checkedAt: null };
    const stored = decodeVerification(note);
    const current = stored?.identifier === name.identifier ? stored : undefined;
    const now = Math.floor(Date.now() / 1000);
    if (!current || now - current.checkedAt >= this.deps.config.ttlSeconds) this.checkInBackground(pubkey, name.identifier);
    return current ? { status: current.status, checkedAt: current.checkedAt } : { status: 'NOT_CHECKED', checkedAt: null };
  }

  /** Resolves when the checks under way have ended (the store must not close under them). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private checkInBackground(pubkey: string, identifier: string): void {
    if (this.checking.has(pubkey) || this.checking.size >= MAX_CHECKS_IN_FLIGHT) return;
    this.checking.add(pubkey);
    const run = this.check(pubkey, identifier)
      .catch((error: unknown) => warnStoreFailure(this.deps.logger, error, 'NIP-05 verification failed'))
      .finally(() => {
        this.checking.delete(pubkey);
        this.running.delete(run);
      });
    this.running.add(run);
  }

  private async check(pubkey: string, identifier: string): Promise<void> {
    const { marks, resolver, config } = this.deps;
    const [mine] = await marks.claim([nip05CheckMarkKey(pubkey, identifier)], config.ttlSeconds);
    if (!mine) return;
    const name = parseNip05Name(identifier);
    if (!name) return;
    const { answer, checkedAt } = await resolver.resolve(name);
    // Not asked (every slot busy, or shutdown): nothing learnt; a later read checks again.
    if (!answeredByDomain(answer)) return marks.clear([nip05CheckMarkKey(pubkey, identifier)]);
    const status = answer.kind === 'found' ? (answer.pubkey === pubkey ? 'VERIFIED' : 'MISMATCH') : answer.kind === 'not_found' ? 'MISMATCH' : 'UNREACHABLE';
    const ttl = Math.max(KEPT_SECONDS, 2 * config.ttlSeconds);
    await marks.set([nip05VerificationMarkKey(pubkey)], ttl, [encodeVerification({ identifier, status, checkedAt })]);
  }
}

/** A verification as a mark's note: `<status> <checkedAt> <identifier>` (identifiers hold no spaces). */
function encodeVerification({ identifier, status, checkedAt }: StoredVerification): string {
  return `${status} ${checkedAt} ${identifier}`;
}

function decodeVerification(note: string | null): StoredVerification | undefined {
  if (!note) return undefined;
  const [status, at, identifier, extra] = note.split(' ');
  const checkedAt = Number(at);
  if (extra !== undefined || identifier === undefined || !STATUSES.has(status ?? '')) return undefined;
  if (!Number.isSafeInteger(checkedAt) || checkedAt < 0) return undefined;
  return { identifier, status: status as StoredVerification['status'], checkedAt };
}
