import { variableDefaults } from '../config/env.js';
import { VARIABLE_HELP } from '../config/variable-help.js';

/** A default as one would set it: lists comma-separated; unset said in words. */
function shown(value: unknown, unset = 'unset'): string {
  if (value === undefined) return unset;
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(',');
  return String(value);
}

/** Every variable with its default and what it does, from the models and VARIABLE_HELP. */
function variables(): { name: string; value: unknown; does: string; unset?: string }[] {
  return variableDefaults().map(({ name, value }) => ({ name, value, ...VARIABLE_HELP[name] }));
}

/** Markdown as a terminal shows it: code marks dropped, a link its text. */
function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replaceAll('`', '').replaceAll('**', '');
}

/** Words of `text` in lines of at most `width` characters, each after `indent`. */
function wrapped(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}

/**
 * The environment variables with their defaults and what each does, for `serve --help`: generated
 * from the configuration's models (config/env.ts) and their help (config/variable-help.ts), never a
 * list of its own.
 */
export function environmentHelp(): string {
  const lines = variables().flatMap(({ name, value, does, unset }) => [`  ${name} (default: ${plain(shown(value, unset))})`, ...wrapped(plain(does), 96, '      ')]);
  return ['', 'Environment variables (docs/configuration.md says the same, with links):', ...lines, '', 'For instance: PORT=3000 DATA_DIR=/var/lib/nostr-lookup nostr-lookup serve'].join('\n');
}

/** Where docs/configuration.md's generated table starts and ends. */
export const TABLE_START = '<!-- The table below is generated from src/config (npm run docs:config): edit it there. -->';
export const TABLE_END = '<!-- end of the generated table -->';

/** The table of docs/configuration.md: a row per variable, its default and what it does. */
export function configurationTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = variables().map(({ name, value, does, unset }) => {
    const fallback = value === undefined ? (unset ?? 'unset') : Array.isArray(value) && value.length === 0 ? '(none)' : `\`${shown(value)}\``;
    return `| \`${name}\` | ${cell(fallback)} | ${cell(does)} |`;
  });
  return [TABLE_START, '', '| variable | default | what it does |', '| --- | --- | --- |', ...rows, '', TABLE_END].join('\n');
}

/** docs/configuration.md with its table made again from the models. */
export function withConfigurationTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/configuration.md has lost the markers of its generated table');
  return page.slice(0, start) + configurationTable() + page.slice(end + TABLE_END.length);
}
