import type { GuardCheck, PublicationDiff } from '../model/versions.js';

const VERDICTS: Record<PublicationDiff['verdict'], string> = {
  published: 'published',
  published_with_quarantine: 'published with quarantined items',
  held: 'HELD (not served; the latest stays)',
};

const CHECK_WORDS: Record<GuardCheck, (count: number, limit: number | string) => string> = {
  removed: (count, limit) => `removed: ${count} items of the latest are missing (more than ${limit} %)`,
  price_drop: (count, limit) => `price drop: ${count} items drop by more than ${limit} %`,
  price_rise: (count, limit) => `price rise: ${count} items rise by more than ${limit} %`,
  zero_price: (count) => `zero price: ${count} items at price 0`,
  size: (count, limit) => `size: ${count} items, fewer than ${limit}`,
};

const pad = (rows: string[][]): string[] => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => `  ${r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()}`);
};

/**
 * The short table `publish` (and rollback, release) print: the version and verdict, the counts,
 * and per tripped check its first offenders with old and new prices; then what to do next.
 */
export function diffTable(storeId: string, version: number, diff: PublicationDiff, restored: number | null = null): string {
  const lines = [`version ${version}: ${restored === null ? VERDICTS[diff.verdict] : `rollback to version ${restored}`}${diff.forced ? ', guard skipped (--force)' : ''}${diff.compared_with === null ? '' : `, compared with version ${diff.compared_with}`}`];
  lines.push(...pad([
    ['added', 'removed', 'price_up', 'price_down', 'unchanged'],
    [diff.added, diff.removed, diff.price_up, diff.price_down, diff.unchanged].map(String),
  ]));
  for (const tripped of diff.tripped) {
    lines.push(CHECK_WORDS[tripped.check](tripped.count, tripped.limit));
    if (tripped.offenders.length > 0) {
      lines.push(...pad([['offer_id', 'old', 'new'], ...tripped.offenders.map((o) => [o.offer_id, o.old_price ?? '-', o.new_price ?? '-'])]));
      if (tripped.count > tripped.offenders.length) lines.push(`  … and ${tripped.count - tripped.offenders.length} more`);
    }
  }
  if (diff.verdict === 'held' && !diff.forced) {
    lines.push(`release: price-export publication release --store ${storeId} --version ${version}`);
    lines.push(`discard: price-export publication discard --store ${storeId} --version ${version}`);
  }
  if (diff.verdict === 'published_with_quarantine') {
    lines.push('quarantined items are served with their previous values (a new item at price 0 is left out) until released:');
    lines.push(`  price-export quarantine release --store ${storeId} [--offer ID…|--all]`);
  }
  return lines.join('\n');
}
