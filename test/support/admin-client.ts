import assert from 'node:assert/strict';

/**
 * A caller of a running instance's internal API (for tests that start the service as a
 * process): `base()` is read at each call, so it may be set once the instance listens.
 */
export function adminCaller(base: () => string, token: string) {
  return async (method: string, path: string, body?: string, contentType = 'application/json') => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body,
    });
    const json = await response.json();
    assert.ok(response.ok, `${method} ${path}: ${response.status}`);
    return json;
  };
}
