/**
 * The one rule for text a caller sends us (item fields, attribute keys, competitor URLs, store
 * names, key labels, profile titles): no C0 control but tab, LF and CR (XML 1.0 cannot carry
 * them, PostgreSQL refuses NUL, a terminal obeys ESC), and no unpaired UTF-16 surrogate (it has
 * no UTF-8 form: SQLite would store invalid UTF-8 and every writer would choke on it).
 */
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

/** Why `value` cannot be stored ("contains a control character …"), or null when it can. */
export function textProblem(value: string): string | null {
  if (CONTROL_CHARACTER.test(value)) return 'contains a control character (only tab, line feed and carriage return are allowed)';
  // isWellFormed is the lone-surrogate test built in: a regex with look-arounds took ~3 % of a
  // publication's main thread (bench/RESULTS.md, "2026-11-26, evening").
  if (!value.isWellFormed()) return 'contains an unpaired UTF-16 surrogate (not a character; it has no UTF-8 form)';
  return null;
}

/**
 * `<name> <why>` for each field that breaks the rule; absent fields pass. The domain refuses
 * them before the store, so both databases answer alike (PostgreSQL would fail on a NUL).
 */
export function textProblems(fields: Record<string, string | null | undefined>): string[] {
  return Object.entries(fields).flatMap(([name, value]) => {
    const problem = typeof value === 'string' ? textProblem(value) : null;
    return problem === null ? [] : [`${name} ${problem}`];
  });
}
