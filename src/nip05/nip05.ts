import type { Nip05Config } from '../config/env.js';
import type { Logger } from '../logger.js';
import type { GuardedFetcher } from '../net/guarded-fetch.js';
import type { MarkStore } from '../store/mark-store.js';
import { Nip05Resolver } from './nip05-resolver.js';
import { Nip05Verifier } from './nip05-verification.js';

/** NIP-05 for the service: names as input (the resolver) and verification of declared ones (the verifier). */
export interface Nip05 {
  resolver: Nip05Resolver;
  verifier: Nip05Verifier;
  /** Ends exchanges under way and waits for background checks: before the store closes. */
  close(): Promise<void>;
}

export function createNip05({ marks, logger, config, fetcher }: { marks: MarkStore; logger: Logger; config: Nip05Config; fetcher: GuardedFetcher }): Nip05 {
  const resolver = new Nip05Resolver({ marks, logger, config, fetcher });
  const verifier = new Nip05Verifier({ marks, resolver, logger, config });
  return {
    resolver,
    verifier,
    close: async () => {
      resolver.close();
      await verifier.settled();
    },
  };
}
