/** Config parsing (src/config/config.ts): defaults, each variable's rule, every problem named at once. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  return assert.fail('expected a ConfigError');
}

describe('loadConfig', () => {
  test('an empty environment gives the documented defaults, frozen', () => {
    const config = loadConfig({});
    assert.equal(config.databaseUrl, 'sqlite:./data/price-export.db');
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.basePath, '');
    assert.equal(config.publicUrl, null);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.adminPort, 8081);
    assert.equal(config.adminHost, '127.0.0.1');
    assert.equal(config.adminToken, null);
    assert.equal(config.redisUrl, null);
    assert.equal(config.rateLimitPerMin, 120);
    assert.equal(config.authFailLimitPerMin, 20);
    assert.equal(config.trustProxy, false);
    assert.equal(config.production, false);
    assert.ok(Object.isFrozen(config));
  });

  test('blank values count as unset; values are trimmed', () => {
    const config = loadConfig({ PORT: '  ', HOST: ' 127.0.0.1 ', LOG_LEVEL: '' });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'info');
  });

  test('BASE_PATH and PUBLIC_URL lose their trailing slashes', () => {
    const config = loadConfig({ BASE_PATH: '/prices/', PUBLIC_URL: 'https://shop.example/prices/' });
    assert.equal(config.basePath, '/prices');
    assert.equal(config.publicUrl, 'https://shop.example/prices');
  });

  test('TRUST_PROXY: false, a hop count, or a list of addresses', () => {
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' }).trustProxy, ['10.0.0.1', '192.168.0.0/16']);
  });

  test('postgres and postgresql URLs are accepted; NODE_ENV=production is production', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).databaseUrl, 'postgresql://u@h/db');
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db', NODE_ENV: 'production' }).production, true);
  });

  test('every bad variable is named in one error', () => {
    const problems = problemsOf({
      DATABASE_URL: 'mysql://x', PORT: '70000', BASE_PATH: 'prices', PUBLIC_URL: 'ftp://x', LOG_LEVEL: 'loud',
      ADMIN_TOKEN: 'short', REDIS_URL: 'http://r', TRUST_PROXY: 'everyone', RATE_LIMIT_PER_MIN: '0', AUTH_FAIL_LIMIT_PER_MIN: '1.5',
    });
    for (const name of ['DATABASE_URL', 'PORT', 'BASE_PATH', 'PUBLIC_URL', 'LOG_LEVEL', 'ADMIN_TOKEN', 'REDIS_URL', 'TRUST_PROXY', 'RATE_LIMIT_PER_MIN', 'AUTH_FAIL_LIMIT_PER_MIN']) {
      assert.ok(problems.some((problem) => problem.startsWith(name)), `${name} in ${problems.join(' | ')}`);
    }
    assert.equal(problems.length, 10);
  });

  test('integer bounds are inclusive', () => {
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
    assert.match(problemsOf({ PORT: '-1' })[0], /PORT must be an integer from 0 to 65535, got "-1"/);
    assert.equal(loadConfig({ RATE_LIMIT_PER_MIN: '100000000' }).rateLimitPerMin, 100_000_000);
    assert.match(problemsOf({ RATE_LIMIT_PER_MIN: '100000001' })[0], /RATE_LIMIT_PER_MIN must be an integer from 1 to 100000000/);
  });

  test('DATABASE_POOL_SIZE: node-postgres\' 10 by default, 1 to 1000', () => {
    assert.equal(loadConfig({}).databasePoolSize, 10);
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize, 4);
    assert.match(problemsOf({ DATABASE_POOL_SIZE: '0' })[0], /DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "0"/);
    assert.match(problemsOf({ DATABASE_POOL_SIZE: 'many' })[0], /DATABASE_POOL_SIZE must be an integer/);
  });

  test('CACHE_MAX_MB: 1 GiB by default, read in MiB', () => {
    assert.equal(loadConfig({}).cacheMaxBytes, 1024 * 1024 * 1024);
    assert.equal(loadConfig({ CACHE_MAX_MB: '8192' }).cacheMaxBytes, 8 * 1024 * 1024 * 1024);
    assert.match(problemsOf({ CACHE_MAX_MB: '0' })[0], /CACHE_MAX_MB must be an integer from 1 to 16777216, got "0"/);
  });

  test('ACCEL_REDIRECT_PREFIX: off by default, a location ending in /; WARM_SCOPE: fleet or instance', () => {
    assert.equal(loadConfig({}).accelRedirectPrefix, null);
    assert.equal(loadConfig({ ACCEL_REDIRECT_PREFIX: '/_cache/' }).accelRedirectPrefix, '/_cache/');
    assert.equal(loadConfig({ ACCEL_REDIRECT_PREFIX: '/internal/price-export/' }).accelRedirectPrefix, '/internal/price-export/');
    for (const bad of ['/_cache', '_cache/', '/a b/', '/../', 'http://x/']) {
      assert.match(problemsOf({ ACCEL_REDIRECT_PREFIX: bad })[0] ?? '', /^ACCEL_REDIRECT_PREFIX must be a location like \/_cache\//, bad);
    }
    assert.equal(loadConfig({}).warmScope, 'fleet');
    assert.equal(loadConfig({ WARM_SCOPE: 'instance' }).warmScope, 'instance');
    assert.match(problemsOf({ WARM_SCOPE: 'mine' })[0], /^WARM_SCOPE must be fleet or instance/);
  });
});
