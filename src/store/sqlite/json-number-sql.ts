/*
 * Minor units printed as the JSON writer prints them, String(units / 100), in SQLite's SQL
 * (json-records.contract.test.ts checks it against JavaScript). PostgreSQL prints float8's
 * shortest text instead (postgres/json-sql.ts pgJsonMoney); this integer rule was both
 * dialects' until it cost PostgreSQL ~2 ms of planning per page.
 *
 * JavaScript prints the shortest decimal that reads back as the same double. Below
 * EXACT_BELOW that is the exact amount with its trailing zeros dropped (199050 → 1990.5,
 * 100 → 1, 5 → 0.05), which integer arithmetic gives. Above, a neighbouring cent can be the
 * shorter or the nearer text to the double (7187549099036804 → 71875490990368.05), and the
 * database's own float printing is of no help: SQLite's printf is not correctly rounded. Those
 * amounts (over 70 trillion in major units) take an exact integer rendition of JavaScript's
 * rule, evaluated only for them.
 */

/**
 * Below 2^46 major units a double's spacing is at most 2^-7 (< 0.005), so the double nearest to
 * an amount of whole cents is nearer to it than to any other amount of whole cents: the exact
 * amount is the shortest text that reads back. Minor units stay below 2^53 (money.ts), so
 * amounts at or above this bound lie in [2^46, 2^47), where the spacing is exactly 2^-6.
 */
export const EXACT_BELOW = 2 ** 46 * 100;

/** `x` minor units (an integer SQL expression, never null, ≥ 0) as an exact decimal, trailing zeros dropped. */
function exactDecimal(x: string): string {
  return `concat(${x} / 100, CASE WHEN ${x} % 100 = 0 THEN '' WHEN ${x} % 10 = 0 THEN concat('.', ${x} % 100 / 10)`
    + ` ELSE concat('.', substr(CAST(100 + ${x} % 100 AS TEXT), 2)) END)`;
}

/**
 * For EXACT_BELOW ≤ units < 2^53: the double is m/64 with m = round(16·units/25) (no ties: 25
 * is odd). Measured in 1/32 of a cent from the double, a cent x lies at |32x − 50m|; it reads
 * back as the double when that is under 25 (it is never 25: one side is even, the other odd).
 * At most two cents do, a = ⌊50m/32⌋ and a + 1; JavaScript takes the one with fewer digits
 * (more trailing zeros), then the nearer, then the even one (ECMA-262 Number::toString).
 */
function nearestShortest(units: string): string {
  const rank = (x: string) => `CASE WHEN ${x} % 100 = 0 THEN 0 WHEN ${x} % 10 = 0 THEN 1 ELSE 2 END`;
  const chosen = `CASE WHEN db >= 25 THEN a WHEN da >= 25 THEN b
                       WHEN ra <> rb THEN CASE WHEN ra < rb THEN a ELSE b END
                       WHEN da <> db THEN CASE WHEN da < db THEN a ELSE b END
                       WHEN a % 2 = 0 THEN a ELSE b END`;
  return `(SELECT ${exactDecimal('x')} FROM (SELECT ${chosen} AS x
             FROM (SELECT a, b, abs(32 * a - 50 * m) AS da, abs(32 * b - 50 * m) AS db, ${rank('a')} AS ra, ${rank('b')} AS rb
                     FROM (SELECT a, a + 1 AS b, m FROM (SELECT 50 * m / 32 AS a, m FROM (SELECT (${units} * 16 + 12) / 25 AS m) AS m0) AS a0) AS d0) AS c0) AS x0)`;
}

/** A money column as the JSON writer prints it: `null`, or String(units / 100). */
export function moneyAsJsonNumber(column: string): string {
  return `CASE WHEN ${column} IS NULL THEN 'null' WHEN ${column} < ${EXACT_BELOW} THEN ${exactDecimal(column)} ELSE ${nearestShortest(column)} END`;
}
