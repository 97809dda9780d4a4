// A verification thread of `import` (verify-pool.ts): NIP-01 checks of a batch of parsed inputs,
// the one rule of nostr/verify-event.ts, answered as reasons only (null: valid). The event itself
// stays on the main thread, which parsed it and sent this thread a copy.
import { parentPort } from 'node:worker_threads';
import { verifyNostrEvent } from '../nostr/verify-event.js';
import type { VerifyReply, VerifyRequest } from './verify-pool.js';

parentPort?.on('message', ({ id, values }: VerifyRequest) => {
  const verdicts = values.map((value) => {
    const verdict = verifyNostrEvent(value);
    if (verdict.ok) return null;
    return verdict.field === undefined ? { reason: verdict.reason } : { reason: verdict.reason, field: verdict.field };
  });
  parentPort?.postMessage({ id, verdicts } satisfies VerifyReply);
});
