/**
 * A pure function's results for the arguments asked lately, for the revalidation path, where a
 * recomputation per request is a measurable share of a 304. Past `max` arguments it starts over
 * (a deployment asks far fewer distinct ones), so memory stays bounded without bookkeeping.
 */
export function rememberRecent<A, R>(compute: (argument: A) => R, max = 10_000): (argument: A) => R {
  const results = new Map<A, R>();
  return (argument) => {
    let result = results.get(argument);
    if (result === undefined) {
      result = compute(argument);
      if (results.size >= max) results.clear();
      results.set(argument, result);
    }
    return result;
  };
}
