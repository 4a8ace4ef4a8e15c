import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('configuration from the environment', () => {
  test('defaults: loopback, port 7000, embedded PGlite in ./.devstream-hub', () => {
    const c = loadConfig({});
    assert.equal(c.port, 7000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.dataDir, resolve('.devstream-hub'));
    assert.equal(c.logLevel, 'info');
    assert.equal(c.mcpStateless, false);
    assert.equal(c.allowedHosts, undefined);
    assert.equal(c.allowedOrigins, undefined);
    assert.equal(c.sessionIdleMs, 30 * 60_000);
    assert.equal(c.defaultProject, 'default');
  });

  test('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://u:p@db:5432/x',
      DATA_DIR: '/tmp/x',
      LOG_LEVEL: 'debug',
      MCP_STATELESS: '1',
      ALLOWED_HOSTS: 'hub.internal:8080, localhost',
      ALLOWED_ORIGINS: 'https://dash.internal',
      SESSION_IDLE_MINUTES: '5',
      DEFAULT_PROJECT: 'Team Board',
    });
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.databaseUrl, 'postgresql://u:p@db:5432/x');
    assert.equal(c.dataDir, '/tmp/x');
    assert.equal(c.logLevel, 'debug');
    assert.equal(c.mcpStateless, true);
    assert.deepEqual(c.allowedHosts, ['hub.internal:8080', 'localhost']);
    assert.deepEqual(c.allowedOrigins, ['https://dash.internal']);
    assert.equal(c.sessionIdleMs, 5 * 60_000);
    assert.equal(c.defaultProject, 'Team Board');
    assert.equal(loadConfig({ MCP_STATELESS: 'false' }).mcpStateless, false);
    assert.equal(loadConfig({ DATABASE_URL: '' }).databaseUrl, undefined, 'empty means unset');
  });

  test('one error names every bad variable, and never shows a secret', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'seventy',
        LOG_LEVEL: 'loud',
        MCP_STATELESS: 'yes',
        SESSION_IDLE_MINUTES: '0',
        DATABASE_URL: 'mysql://admin:hunter2@db/x',
        HOST: ' ',
      });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'MCP_STATELESS', 'SESSION_IDLE_MINUTES', 'DATABASE_URL', 'HOST']) {
      assert.match(message, new RegExp(`^  ${name}: `, 'm'), `${name} is named`);
    }
    assert.match(message, /"seventy"/, 'shows a harmless bad value');
    assert.doesNotMatch(message, /hunter2/, 'never shows the database password');
    assert.throws(() => loadConfig({ PORT: '70000' }), /PORT: must be an integer from 0 to 65535/);
  });

  test('OLLAMA_SUMMARY_MODEL: unset by default (no summaries on the server); the summaries use OLLAMA_HOST', () => {
    const none = loadConfig({});
    assert.deepEqual(none.summaries, {
      model: undefined,
      ollamaHost: 'http://127.0.0.1:11434',
      concurrency: 4,
      timeoutMs: 120_000,
    });
    assert.equal(loadConfig({ OLLAMA_SUMMARY_MODEL: '  ' }).summaries.model, undefined, 'blank means unset');
    const set = loadConfig({
      OLLAMA_HOST: 'gpu-box:11434/',
      OLLAMA_SUMMARY_MODEL: ' qwen2.5-coder:7b ',
      OLLAMA_SUMMARY_CONCURRENCY: '8',
      OLLAMA_SUMMARY_TIMEOUT_MS: '60000',
    });
    assert.deepEqual(set.summaries, {
      model: 'qwen2.5-coder:7b',
      ollamaHost: 'http://gpu-box:11434',
      concurrency: 8,
      timeoutMs: 60_000,
    });
    assert.throws(
      () => loadConfig({ OLLAMA_SUMMARY_CONCURRENCY: '0' }),
      /OLLAMA_SUMMARY_CONCURRENCY: must be an integer from 1 to 64/,
    );
  });

  test('REDIS_URL: a redis:// or rediss:// URL; unset by default; its password never shown', () => {
    assert.equal(loadConfig({}).redisUrl, undefined);
    assert.equal(loadConfig({ REDIS_URL: ' ' }).redisUrl, undefined, 'blank means unset');
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(loadConfig({ REDIS_URL: 'rediss://:pw@cache:6380/2' }).redisUrl, 'rediss://:pw@cache:6380/2');
    for (const bad of ['127.0.0.1:6379', 'http://cache:6379', 'redis://', 'redis://:s3cret-pass@']) {
      assert.throws(
        () => loadConfig({ REDIS_URL: bad }),
        (error: Error) =>
          error instanceof ConfigError &&
          /^ {2}REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/m.test(error.message) &&
          !error.message.includes('s3cret-pass'),
        bad,
      );
    }
  });

  test('PUBLIC_URL: an http(s) URL, without its trailing slash; unset by default', () => {
    assert.equal(loadConfig({}).publicUrl, undefined);
    assert.equal(loadConfig({ PUBLIC_URL: '' }).publicUrl, undefined, 'empty means unset');
    assert.equal(loadConfig({ PUBLIC_URL: ' https://hub.example.org/ ' }).publicUrl, 'https://hub.example.org');
    assert.equal(
      loadConfig({ PUBLIC_URL: 'http://10.0.0.5:7000/devstream' }).publicUrl,
      'http://10.0.0.5:7000/devstream',
    );
    for (const bad of ['hub.example.org', 'ftp://hub.example.org', 'https://hub.example.org/?x=1', 'https://']) {
      assert.throws(() => loadConfig({ PUBLIC_URL: bad }), /PUBLIC_URL: must be an http\(s\) URL/, bad);
    }
  });
});
