import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../support/test-config.js';
import { assertError, assertValidation } from '../helpers/assertions.js';
import { pglite, type TestDb } from '../helpers/pglite.js';
import { taskInput } from '../helpers/task-input.js';

/**
 * The REST mirror through `app.inject()` on PGlite: routes, validation and the error body, without
 * a socket. Over real HTTP (hosts, origins, body limits, streaming): test/tasks-rest.test.ts.
 */
describe('REST through app.inject() (pglite)', () => {
  let database: TestDb;
  let app: FastifyInstance;
  before(async () => {
    database = await pglite.open();
    // app.inject() sends Host: localhost:80; the service not listening, there is no port to match.
    app = await buildApp(testConfig({ allowedHosts: ['localhost'] }), {
      db: database.db,
      schemaVersion: database.schemaVersion,
    });
  });
  after(async () => {
    await app?.close();
    await database?.dispose();
  });
  const inject = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const r = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    return { status: r.statusCode, body: r.body ? r.json() : undefined };
  };

  test('a task created by POST is listed by GET', async () => {
    const created = await inject(
      'POST',
      '/api/v1/tasks',
      taskInput({ title: 'Injected', priority: 4, project: 'Inject' }),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const listed = await inject('GET', '/api/v1/tasks?project=Inject');
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.tasks.map((t: { title: string }) => t.title),
      ['Injected'],
    );
  });

  test('a wrong type is a 400 VALIDATION_ERROR naming the field', async () => {
    const r = await inject('POST', '/api/v1/tasks', {
      title: 'Bad',
      description: 'd',
      task_type: 'coding',
      priority: 'high',
    });
    assertValidation(r, 'priority', 'priority as a string');
  });

  test('an unknown route is a 404 NOT_FOUND error body', async () => {
    assertError(await inject('GET', '/api/v1/no-such-thing'), 404, 'NOT_FOUND', 'unknown route');
  });
});
