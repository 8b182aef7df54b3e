import assert from 'node:assert/strict';

/**
 * Asserts a problem+json answer (RFC 9457, CONTRACT §5): the status and code, a title, detail
 * and type, the headers its status calls for (WWW-Authenticate on 401, Retry-After on 429) and
 * the security headers. Returns the parsed body.
 */
export function assertProblem(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json');
  const body = JSON.parse(response.body);
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  assert.equal(typeof body.type, 'string');
  if (status === 401) assert.equal(response.headers['www-authenticate'], 'ApiKey');
  if (status === 429) assert.match(String(response.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(response.headers['x-content-type-options'], 'nosniff');
  return body;
}
