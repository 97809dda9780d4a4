// A verification thread of `import` (verify-pool.ts): NIP-01 checks of a batch of parsed inputs,
// the one rule of nostr/verify-event.ts, answered as reasons only (null: valid). The event itself
// stays on the main thread, which parsed it and sent this thread a copy.
import { parentPort } from 'node:worker_threads';
import { verifyNostrEvent } from '../nostr/verify-event.js';
import type { VerifyReply, VerifyRequest } from './verify-pool.js';

parentPort?.on('message', ({ id, inputs }: VerifyRequest) => {
  const verdicts = inputs.map((input) => {
    // A text is what the main thread parsed its value from: it parses again, as JSON.parse always does.
    const verdict = verifyNostrEvent('text' in input ? JSON.parse(input.text) : input.value);
    if (verdict.ok) return null;
    return verdict.field === undefined ? { reason: verdict.reason } : { reason: verdict.reason, field: verdict.field };
  });
  parentPort?.postMessage({ id, verdicts } satisfies VerifyReply);
});
