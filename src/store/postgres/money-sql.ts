/**
 * Minor units (an integer SQL expression, never negative: CONTRACT §2) as units, `.` and two
 * digits (199050 → 1990.50); NULL stays NULL. `x * 0.01` is a numeric of scale 2, which
 * PostgreSQL prints as exactly that, in one C call: 100k amounts in ~26 ms, against ~32 ms
 * for concat() of the integer parts and ~44 ms for the same joined with `||` (a scratch
 * COPY to /dev/null; bench/RESULTS.md, "2026-11-26, evening").
 */
export const pgMoneyText = (x: string): string => `((${x}) * 0.01)::text`;
