import { variableDefaults } from '../config/env.js';

/** A default as one would set it: lists comma-separated; unset and empty lists said in words. */
function shown(value: unknown): string {
  if (value === undefined) return '(unset)';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(',');
  return String(value);
}

/**
 * The environment variables with their defaults, for `serve --help`: generated from
 * the configuration's models (config/env.ts), never a list of its own. The README says what each does.
 */
export function environmentHelp(): string {
  const variables = variableDefaults();
  const width = Math.max(...variables.map(({ name }) => name.length));
  const lines = variables.map(({ name, value }) => `  ${name.padEnd(width)}  ${shown(value)}`);
  return [
    '',
    'Environment variables, with their defaults (README, "Configuration", says what each does):',
    ...lines,
    '',
    'For instance: PORT=3000 DATA_DIR=/var/lib/nostr-lookup nostr-lookup serve',
  ].join('\n');
}
