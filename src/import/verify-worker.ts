// A verification thread of `import` (verify-pool.ts): NIP-01 checks of a batch of parsed inputs,
// the one rule of nostr/verify-event.ts, answered as reasons (null: valid). The event itself stays
// on the main thread, which parsed it too (but an UNPARSED input's, whose event but its tags comes
// back: verify-pool.ts); for a valid one this thread also hands back what storing
// it takes from its whole body (its wire form unless that is the text sent, a follow list's
// follows as bytes, moved rather than copied), so that the main thread does not read it again.
import { isUtf8 } from 'node:buffer';
import { parentPort } from 'node:worker_threads';
import { serializeEvent } from '../nostr/event.js';
import { FOLLOW_LIST_KIND, followKeysOf } from '../nostr/follows.js';
import { type Prepared, UNPARSED, type VerifyReply, type VerifyRequest, verifyInput } from './verify-pool.js';

parentPort?.on('message', ({ id, inputs, wires }: VerifyRequest) => {
  const prepared: (Prepared | null)[] = [];
  const moved: ArrayBuffer[] = [];
  const verdicts = inputs.map((input) => {
    // A text is what the main thread parsed its value from (parsed again here: a string crosses to a
    // thread cheaper than a parsed list), or an UNPARSED input's, parsed only here (verifyInput);
    // or an UNPARSED input's bytes, decoded here.
    const bytes = 'wire' in input ? Buffer.from(wires ?? new ArrayBuffer(0), input.wire[0], input.wire[1]) : undefined;
    const text = 'text' in input ? input.text : bytes?.toString('utf8');
    const value = 'unparsed' in input || bytes ? UNPARSED : text === undefined ? (input as { value: unknown }).value : JSON.parse(text);
    const verdict = verifyInput(value, text);
    if (!verdict.ok) {
      prepared.push(null);
      return verdict.field === undefined ? { reason: verdict.reason } : { reason: verdict.reason, field: verdict.field };
    }
    const json = serializeEvent(verdict.event);
    // Bytes sent are the wire form's only if they are UTF-8 (else their text holds U+FFFD where they were not).
    const ready: Prepared = json === text && (!bytes || isUtf8(bytes)) ? {} : { json };
    if (value === UNPARSED) {
      const { id, pubkey, created_at, kind, content, sig } = verdict.event;
      ready.head = { id, pubkey, created_at, kind, content, sig };
    }
    if (verdict.event.kind === FOLLOW_LIST_KIND) {
      ready.follows = followKeysOf(verdict.event);
      moved.push(ready.follows.buffer as ArrayBuffer);
    }
    prepared.push(ready);
    return null;
  });
  parentPort?.postMessage({ id, verdicts, prepared } satisfies VerifyReply, moved);
});
