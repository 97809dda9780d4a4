// The notes of the note search benches (note-search.ts, note-search-writes.ts): texts of 5 to 30
// words drawn by Zipf's law from 50,000 pronounceable words, `often` in every other note, spread
// over a year by 10,000 authors.
import { createHash } from 'node:crypto';
import type { NostrEvent } from '../../src/nostr/event.js';
import { seeded } from './recall/network/random.js';

export const hex = (text: string) => createHash('sha256').update(text).digest('hex');
export const T = 1_700_000_000;
const SPREAD = 365 * 86_400;
const AUTHORS = 10_000;
const VOCABULARY = 50_000;

/** A pronounceable word per rank (distinct): the vocabulary's words. */
export function wordOf(rank: number): string {
  const syllables = ['ka', 'lo', 'mi', 'nu', 'pe', 'ra', 'si', 'to', 'vu', 'ze', 'ba', 'do', 'fi', 'gu', 'he', 'jo'];
  let word = '';
  let n = rank + 16;
  while (n > 0) {
    word += syllables[n % 16];
    n = Math.floor(n / 16);
  }
  return word;
}

/** Ranks drawn by Zipf's law (exponent 1) over the vocabulary, by inverse of its cumulative weights. */
function zipf(next: () => number): () => number {
  const cumulative = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let rank = 0; rank < VOCABULARY; rank++) cumulative[rank] = sum += 1 / (rank + 1);
  return () => {
    const target = next() * sum;
    let low = 0;
    let high = VOCABULARY - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((cumulative[middle] as number) < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/** Note n's text: 5 to 30 words, `often` in every other note, made as they are read (a million held at once slowed the queries' timing with the collector's pauses). */
export function* textsOf(count: number, seed: number): Generator<string> {
  const next = seeded(seed);
  const rank = zipf(next);
  for (let n = 0; n < count; n++) {
    const words: string[] = [];
    const length = 5 + Math.floor(next() * 26);
    for (let index = 0; index < length; index++) words.push(wordOf(rank()));
    if (n % 2 === 0) words.splice(Math.floor(next() * words.length), 0, 'often');
    yield words.join(' ');
  }
}

export function texts(count: number, seed: number): string[] {
  return [...textsOf(count, seed)];
}

export function note(n: number, kind: number, content: string): NostrEvent {
  const pubkey = hex(`author ${n % AUTHORS}`);
  const createdAt = T + Math.floor((n * 7919) % SPREAD);
  return { id: hex(`${kind} ${n}`), pubkey, created_at: createdAt, kind, tags: [], content, sig: '0'.repeat(128) };
}

