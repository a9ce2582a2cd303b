/**
 * The one pagination loop of the AWS calls that list in pages (DescribeInstances, ListBuckets):
 * fetch a page, take its continuation token, fetch the next, until a page has none. A token
 * seen before ends the listing too: AWS never repeats one, but a broken endpoint that did would
 * otherwise loop forever. (The SDK's own paginators stop only on the token just used, and accept
 * only the SDK's client classes.)
 */

/** Each page of a listing, in order; `fetch(token)` reads one, `nextToken(page)` continues it. */
export async function* pages<P>(
  fetch: (token: string | undefined) => Promise<P>,
  nextToken: (page: P) => string | undefined,
): AsyncGenerator<P, void, undefined> {
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const page = await fetch(token);
    yield page;
    const next = nextToken(page);
    token = next !== undefined && next !== "" && !seen.has(next) ? next : undefined;
    if (token !== undefined) seen.add(token);
  } while (token !== undefined);
}
