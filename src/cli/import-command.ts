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
  const store = await openCommandStore('import', config, logger);
  if (!store) return 1;

  // A progress bar only for people watching a terminal; by bytes when the size is known.
  const bar = process.stdout.isTTY
    ? new SingleBar({
        format: input.size
          ? 'importing [{bar}] {percentage}% | {read} events, {stored} stored'
          : 'importing {read} events, {stored} stored',
        hideCursor: true,
      })
    : undefined;
  let bytesRead = 0;
  input.stream.on('data', (chunk: Buffer | string) => {
    bytesRead += chunk.length;
  });
  bar?.start(input.size ?? 0, 0, { read: 0, stored: 0 });
  const onProgress = (summary: Readonly<ImportSummary>) =>
    bar?.update(bytesRead, { read: summary.read, stored: summary.stored + summary.replaced });

  try {
    const summary = await importEvents(input.stream, store, { batchSize: options.batchSize, onProgress });
    bar?.update(input.size ?? 0);
    bar?.stop();
    process.stdout.write(`${options.json ? JSON.stringify(summary) : formatSummary(summary)}\n`);
    return 0;
  } catch (error) {
    bar?.stop();
    logger.error({ err: error }, 'import failed');
    process.stderr.write(`nostr-lookup import: failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
