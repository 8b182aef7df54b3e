import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { allTags, notModified, setValidators } from './conditional-request.js';

const ask = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
const lastModified = new Date('2026-11-25T10:00:00.250Z');
const tags = allTags('v3-abcdefghijklmnop');

describe('conditional requests (RFC 9110 §13)', () => {
  it('If-None-Match: the ETag given back, any representation of the variant, a list, a weak tag, or *', () => {
    for (const value of ['"v3-abcdefghijklmnop"', '"v3-abcdefghijklmnop-br"', '"other", "v3-abcdefghijklmnop-gzip"', 'W/"v3-abcdefghijklmnop"', ' * ']) {
      assert.equal(notModified(ask({ 'if-none-match': value }), tags, lastModified), true, value);
    }
  });

  it('If-None-Match: another variant or version is modified, and wins over a matching If-Modified-Since', () => {
    for (const value of ['"v2-abcdefghijklmnop"', '"v3-abcdefghijklmnop-zstd"', 'v3-abcdefghijklmnop', '']) {
      assert.equal(notModified(ask({ 'if-none-match': value, 'if-modified-since': lastModified.toUTCString() }), tags, lastModified), false, value);
    }
  });

  it('If-Modified-Since: at or after Last-Modified (to the second) is not modified; before, or unreadable, is', () => {
    assert.equal(notModified(ask({ 'if-modified-since': 'Wed, 25 Nov 2026 10:00:00 GMT' }), tags, lastModified), true);
    assert.equal(notModified(ask({ 'if-modified-since': 'Wed, 25 Nov 2026 11:00:00 GMT' }), tags, lastModified), true);
    assert.equal(notModified(ask({ 'if-modified-since': 'Wed, 25 Nov 2026 09:59:59 GMT' }), tags, lastModified), false);
    assert.equal(notModified(ask({ 'if-modified-since': 'yesterday' }), tags, lastModified), false);
  });

  it('sets Last-Modified as an HTTP date, for each value asked (remembered or not)', () => {
    const headers: Record<string, string> = {};
    const reply = { header(name: string, value: string) { headers[name] = value; return reply; } } as unknown as FastifyReply;
    for (const at of [lastModified, new Date('2027-01-02T03:04:05Z'), lastModified]) {
      assert.equal(setValidators(reply, 'v3-abcdefghijklmnop', 'br', at), '"v3-abcdefghijklmnop-br"');
      assert.equal(headers['Last-Modified'], at.toUTCString());
    }
  });
});
