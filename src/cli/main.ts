#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config/env.js';
import { createLogger, exitAfterLogs } from '../logger.js';
import { closeOnSignals, startService } from '../service.js';
import { environmentHelp } from './environment-help.js';
import { guardProcess } from './process-guards.js';
import { runImport } from './import-command.js';
import { runRelations } from './relations-command.js';
import { runStats } from './stats-command.js';
import { runSync } from './sync-command.js';
import { PACKAGE_VERSION } from '../version.js';

/** Reads the configuration, or prints every problem and exits 1. */
function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`nostr-lookup: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

function retryCount(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 20) throw new InvalidArgumentError('must be a whole number from 0 to 20');
  return parsed;
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 100_000) {
    throw new InvalidArgumentError('must be a whole number from 1 to 100000');
  }
  return parsed;
}

/** Unix seconds, from unix seconds or an ISO 8601 date, not before 0 nor in the future. */
function sinceTime(value: string): number {
  const trimmed = value.trim();
  // Date.parse alone is lenient (it reads "-5" as a date): only ISO 8601 shapes are handed to it.
  const isoDate = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;
  const seconds = /^\d{1,12}$/.test(trimmed)
    ? Number(trimmed)
    : isoDate.test(trimmed)
      ? Math.floor(Date.parse(trimmed) / 1000)
      : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > Date.now() / 1000) {
    throw new InvalidArgumentError('must be unix seconds or an ISO date (2024-01-31), not in the future');
  }
  return seconds;
}

const program = new Command()
  .name('nostr-lookup')
  .version(PACKAGE_VERSION, '-V, --version', 'print the version and exit')
  .description('Nostr event and profile lookup service. Configuration: environment variables (`nostr-lookup serve --help` lists them; docs/configuration.md).');

program
  .command('serve')
  .description('serve GET /event, GET /user-profile, /graphql, /healthz and /readyz')
  .addHelpText('after', environmentHelp)
  .action(async () => {
    const config = configOrExit();
    const logger = createLogger(config.log);
    guardProcess(logger);
    try {
      closeOnSignals(await startService(config, logger), logger);
    } catch (error) {
      // Say why in one line (a port in use, an unusable DATA_DIR…), then exit 1.
      process.stderr.write(`nostr-lookup serve: ${(error as Error).message}\n`);
      exitAfterLogs(logger, 1);
    }
  });

program
  .command('sync')
  .description('follow the relays in RELAYS for SYNC_KINDS and index what verifies, until SIGTERM/SIGINT')
  .option(
    '--since <time>',
    'where a relay without a cursor starts: unix seconds or an ISO date (default: an hour ago)',
    sinceTime,
  )
  .action(async (options: { since?: number }) => {
    const config = configOrExit();
    const logger = createLogger(config.log);
    guardProcess(logger);
    const code = await runSync(options, config, logger);
    // Exit explicitly: closed relay connections may leave nostr-tools timers behind.
    exitAfterLogs(logger, code);
  });

program
  .command('import')
  .description('verify and index events from JSON Lines (events or relay messages) or a JSON array')
  .argument('<file>', 'file to read, or - for standard input')
  .option('--batch-size <n>', 'events written per batch', positiveInteger, 500)
  .option('--json', 'print the summary as JSON', false)
  .option('--retries <n>', 'times a batch is retried while the store is unavailable (waits 1 s, doubling)', retryCount, 5)
  .action(async (file: string, options: { batchSize: number; json: boolean; retries: number }) => {
    const config = configOrExit();
    // Logs go to stderr, so stdout holds only the summary.
    const logger = createLogger(
      { level: config.log.level === 'info' ? 'warn' : config.log.level },
      process.stderr,
    );
    guardProcess(logger);
    process.exitCode = await runImport(file, options, config, logger);
  });

program
  .command('stats')
  .description('how full the index is: servable events by kind, profiles, follow lists, the store\'s size (kept counters: cheap, safe beside a running service)')
  .option('--json', 'print the summary as JSON', false)
  .action(async (options: { json: boolean }) => {
    const config = configOrExit();
    const logger = createLogger({ level: config.log.level === 'info' ? 'warn' : config.log.level }, process.stderr);
    guardProcess(logger);
    process.exitCode = await runStats(options, config, logger);
  });

const relations = program
  .command('relations')
  .description('maintenance of the relationship index (replies, reactions, reposts, quotes): run with writers stopped');

for (const [action, description] of [
  ['check', 'recount every figure from the stored events and print where the maintained ones differ (exit 2 if any)'],
  ['rebuild', 'empty the relationship index and relate every stored event again, then check (for events stored before this version)'],
] as const) {
  relations
    .command(action)
    .description(description)
    .option('--json', 'print the result as JSON', false)
    .action(async (options: { json: boolean }) => {
      const config = configOrExit();
      const logger = createLogger({ level: config.log.level === 'info' ? 'warn' : config.log.level }, process.stderr);
      guardProcess(logger);
      process.exitCode = await runRelations(action, options, config, logger);
    });
}

await program.parseAsync();
