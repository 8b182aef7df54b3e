/**
 * Arguments per concat() call: below the lowest limit of both dialects — SQLite's
 * SQLITE_MAX_FUNCTION_ARG (127 at its lowest setting) and PostgreSQL's FUNC_MAX_ARGS (100).
 */
const MAX_CONCAT_ARGUMENTS = 90;

/** `concat(…)` of SQL expressions, nested past the argument limit; both dialects take NULL as ''. */
export function sqlConcat(parts: readonly string[]): string {
  if (parts.length <= MAX_CONCAT_ARGUMENTS) return `concat(${parts.join(', ')})`;
  const groups: string[] = [];
  for (let at = 0; at < parts.length; at += MAX_CONCAT_ARGUMENTS) groups.push(sqlConcat(parts.slice(at, at + MAX_CONCAT_ARGUMENTS)));
  return sqlConcat(groups);
}
