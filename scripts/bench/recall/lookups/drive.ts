// Sends the lookups to the service, `concurrency` in flight at a time, each once, and times each one
// from the request to the last byte of its answer.
import type { Lookup } from './sample.js';

export interface Answer {
  status: number;
  ms: number;
  body: unknown;
  /** Why there is no HTTP status (status 0): a socket error or the bench's own time limit. */
  error?: string;
}

export async function drive(
  serviceUrl: string,
  lookups: readonly Lookup[],
  options: { concurrency: number; limitMs: number; progress?: (done: number) => void },
): Promise<Answer[]> {
  const answers: Answer[] = new Array(lookups.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let index = next++; index < lookups.length; index = next++) {
      answers[index] = await ask(`${serviceUrl}${(lookups[index] as Lookup).path}`, options.limitMs);
      options.progress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return answers;
}

export async function ask(url: string, limitMs: number): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(limitMs) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, ms: performance.now() - started, body };
  } catch (error) {
    return { status: 0, ms: performance.now() - started, body: undefined, error: (error as Error).message };
  }
}
