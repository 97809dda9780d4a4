import type { Config } from '../config/env.js';
import type { Logger } from '../logger.js';
import { checkRelations, type RelationCheck, rebuildRelations } from '../store/relation-check.js';
import { openCommandStore } from './open-command-store.js';

export interface RelationsCommandOptions {
  json: boolean;
}

/** Differences printed at most (the count is always exact). */
const SHOWN_DIFFERENCES = 20;

/**
 * `nostr-lookup relations rebuild`: empties the relationship index and relates every servable event
 * again (for events stored before the index existed, or after a write interrupted between an event
 * and its relations). `nostr-lookup relations check`: recounts every figure from the events and
 * prints each target whose maintained figures differ; exit 0 if none, 2 if some, 1 on failure.
 * Both read every stored event: run them with writers (`serve`'s fill, `import`, `sync`) stopped.
 */
export async function runRelations(action: 'rebuild' | 'check', options: RelationsCommandOptions, config: Config, logger: Logger): Promise<number> {
  const store = await openCommandStore(`relations ${action}`, config, logger, { bulk: true });
  if (!store) return 1;
  try {
    // A rebuild is checked at once: what it related, then any difference left.
    const related = action === 'rebuild' ? await rebuildRelations(store) : undefined;
    const check = await checkRelations(store);
    report(options, action, { ...check, events: related ?? check.events });
    return differencesOf(check) === 0 ? 0 : 2;
  } catch (error) {
    process.stderr.write(`nostr-lookup relations ${action}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

function differencesOf(check: RelationCheck): number {
  return check.differences.length + check.zapDifferences.length + check.followDifferences.length + check.noteDifferences.length + check.searchDifferences.length + check.noteSearchDifferences.length + check.notificationDifferences.length + check.kindDifferences.length + check.totalDifferences.length;
}

function report(options: RelationsCommandOptions, action: string, check: RelationCheck): void {
  const { events, targets, differences, zapSubjects, zapDifferences, followSubjects, followDifferences, noteLists, noteDifferences, searchSubjects, searchDifferences, noteSearchWords, noteSearchDifferences, notificationRecipients, notificationDifferences, kindDifferences, totalDifferences } = check;
  const count = differencesOf(check);
  if (options.json) {
    const shown = {
      differences: differences.slice(0, SHOWN_DIFFERENCES),
      zapDifferences: zapDifferences.slice(0, SHOWN_DIFFERENCES),
      followDifferences: followDifferences.slice(0, SHOWN_DIFFERENCES),
      noteDifferences: noteDifferences.slice(0, SHOWN_DIFFERENCES),
      searchDifferences: searchDifferences.slice(0, SHOWN_DIFFERENCES),
      noteSearchDifferences: noteSearchDifferences.slice(0, SHOWN_DIFFERENCES),
      notificationDifferences: notificationDifferences.slice(0, SHOWN_DIFFERENCES),
      kindDifferences,
      totalDifferences,
    };
    process.stdout.write(`${JSON.stringify({ action, events, targets, zapped: zapSubjects, follows: followSubjects, notes: noteLists, search: searchSubjects, words: noteSearchWords, notified: notificationRecipients, differences: count, shown })}\n`);
    return;
  }
  const lines = [
    `${action === 'rebuild' ? 'related' : 'read'}    ${events} events`,
    `targets    ${targets}`,
    `zapped     ${zapSubjects}`,
    `follows    ${followSubjects}`,
    `notes      ${noteLists}`,
    `search     ${searchSubjects}`,
    `words      ${noteSearchWords}`,
    `notified   ${notificationRecipients}`,
    `differences ${count}`,
  ];
  for (const { kind, maintained, recounted } of kindDifferences) lines.push(`  events of kind ${kind}: ${maintained} counted, ${recounted} held`);
  for (const { total, maintained, recounted } of totalDifferences) lines.push(`  ${total}: ${maintained} counted, ${recounted} held`);
  for (const { target, maintained, recounted } of differences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(`  ${target}`, `    maintained ${JSON.stringify(maintained.stats)} replies ${maintained.replies.length}`, `    recounted  ${JSON.stringify(recounted.stats)} replies ${recounted.replies.length}`);
  }
  // A subject is `e<event id>` or `p<pubkey>`; a group is (recipient, receipt signer).
  for (const { subject, maintained, recounted } of zapDifferences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(`  zaps of ${subject}`, `    maintained ${JSON.stringify(maintained)}`, `    recounted  ${JSON.stringify(recounted)}`);
  }
  for (const { pubkey, maintained, recounted } of followDifferences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(
      `  follows of ${pubkey}`,
      `    maintained followers ${maintained.followers} (${maintained.list.length} listed) following ${maintained.following}`,
      `    recounted  followers ${recounted.followers} following ${recounted.following}`,
    );
  }
  for (const { author, kind, maintained, recounted } of noteDifferences.slice(0, SHOWN_DIFFERENCES)) {
    const list = kind === 'home' ? `the home timeline of ${author} (kinds 1, 6, 16)` : `notes of ${author} kind ${kind}`;
    lines.push(`  ${list}`, `    maintained ${maintained.length} events`, `    recounted  ${recounted.length} events`);
  }
  for (const { pubkey, maintained, recounted } of searchDifferences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(`  search of ${pubkey}`, `    maintained ${JSON.stringify(maintained)}`, `    recounted  ${JSON.stringify(recounted)}`);
  }
  for (const { word, maintained, recounted } of noteSearchDifferences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(`  notes with the word ${JSON.stringify(word)}: ${maintained.length} indexed, ${recounted.length} recounted`);
  }
  if (noteSearchDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${noteSearchDifferences.length - SHOWN_DIFFERENCES} more words`);
  for (const { pubkey, maintained, recounted } of notificationDifferences.slice(0, SHOWN_DIFFERENCES)) {
    lines.push(`  notifications of ${pubkey}: ${maintained.entries.length} kept, ${recounted.entries.length} recounted (${JSON.stringify(maintained.counts)} vs ${JSON.stringify(recounted.counts)})`);
  }
  if (notificationDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${notificationDifferences.length - SHOWN_DIFFERENCES} more recipients`);
  if (searchDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${searchDifferences.length - SHOWN_DIFFERENCES} more searchable pubkeys`);
  if (noteDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${noteDifferences.length - SHOWN_DIFFERENCES} more note lists`);
  if (followDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${followDifferences.length - SHOWN_DIFFERENCES} more pubkeys`);
  if (differences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${differences.length - SHOWN_DIFFERENCES} more targets`);
  if (zapDifferences.length > SHOWN_DIFFERENCES) lines.push(`  … and ${zapDifferences.length - SHOWN_DIFFERENCES} more zapped`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
