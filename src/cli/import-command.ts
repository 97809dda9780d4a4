import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { SingleBar } from 'cli-progress';
import type { Config } from '../config/env.js';
import { formatSummary, type ImportSummary, importEvents } from '../import/import-events.js';
import type { Logger } from '../logger.js';
import { openCommandStore } from './open-command-store.js';

export interface ImportCommandOptions {
  batchSize: number;
  json: boolean;
  /** Retries per batch while the store is unavailable. */
  retries: number;
}

/** Opens the input before anything else, so an unreadable input fails fast with a clear message. */
async function openInput(source: string): Promise<{ stream: Readable; size?: number }> {
  if (source === '-') return { stream: process.stdin };
  const info = await stat(source);
  if (!info.isFile()) throw new Error(`${source} is not a file`);
  const stream = createReadStream(source);
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  return { stream, size: info.size };
}

/** A failure in one line: the error and its cause's message (a full disk, a timeout), no stack. */
function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`.replace(/\s+/g, ' ').slice(0, 300);
}

/** `nostr-lookup import <file|->`; returns the process exit code. */
export async function runImport(
  source: string,
  options: ImportCommandOptions,
  config: Config,
  logger: Logger,
): Promise<number> {
  let input: { stream: Readable; size?: number };
  try {
    input = await openInput(source);
  } catch (error) {
    process.stderr.write(`nostr-lookup import: cannot read ${source}: ${(error as Error).message}\n`);
    return 1;
  }
  const store = await openCommandStore('import', config, logger, { bulk: true });
  if (!store) return 1;

  // A progress bar only for people watching a terminal; by bytes when the size is known.
  const bar = process.stdout.isTTY
    ? new SingleBar({
        format: input.size
          ? 'importing [{bar}] {percentage}% | {read} events, {stored} stored, {replaced} replaced'
          : 'importing {read} events, {stored} stored, {replaced} replaced',
        hideCursor: true,
      })
    : undefined;
  let bytesRead = 0;
  input.stream.on('data', (chunk: Buffer | string) => {
    bytesRead += chunk.length;
  });
  bar?.start(input.size ?? 0, 0, { read: 0, stored: 0, replaced: 0 });
  // The summary's own words and figures (stored and replaced apart), so the two never disagree.
  const onProgress = (summary: Readonly<ImportSummary>) =>
    bar?.update(bytesRead, { read: summary.read, stored: summary.stored, replaced: summary.replaced });

  const onRetry = (attempt: number, waitMs: number, error: unknown) =>
    process.stderr.write(
      `nostr-lookup import: the store did not take a batch (${describeFailure(error)}); attempt ${attempt + 1} in ${waitMs / 1000} s\n`,
    );
  let progress: Readonly<ImportSummary> | undefined;
  try {
    const summary = await importEvents(input.stream, store, {
      batchSize: options.batchSize,
      onProgress: (running) => {
        progress = running;
        onProgress(running);
      },
      onRetry,
      writeAttempts: options.retries + 1,
    });
    bar?.update(input.size ?? 0);
    bar?.stop();
    process.stdout.write(`${options.json ? JSON.stringify(summary) : formatSummary(summary)}\n`);
    return 0;
  } catch (error) {
    bar?.stop();
    // One line that says why, and what was written before: never a stack (the log has the cause at debug).
    logger.debug({ err: error }, 'import failed');
    const written = progress ? `; written before it: ${progress.stored + progress.replaced} events (importing again is safe)` : '';
    process.stderr.write(`nostr-lookup import: failed: ${describeFailure(error)}${written}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
