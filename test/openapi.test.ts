import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { openApiDocument } from '../src/http/openapi-document.js';
import { toolJsonSchema } from '../src/mcp/server.js';
import { operations } from '../src/operations/index.js';
import type { TestDb } from './helpers/backends.js';
import { once } from './helpers/backends.js';
import { pglite } from './helpers/pglite.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

const COMMITTED = new URL('../openapi/openapi.json', import.meta.url);
/** The Redocly CLI (an exact devDependency; `npm run lint:openapi` runs it too). */
const REDOCLY = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
const run = promisify(execFile);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * A JSON Schema without the keys that name its dialect or document rather than constrain values.
 * MCP lists zod's draft 2020-12 output minus `$schema` (src/mcp/server.ts toolJsonSchema);
 * @fastify/swagger embeds zod's OpenAPI 3.1 output, which has no `$schema`. Apart from those
 * identity keys the two are expected to be identical, so nothing else is normalised: a real
 * difference in types, formats, enums, required fields or additionalProperties fails the test.
 */
function normalise(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normalise);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(
      Object.entries(schema as Record<string, unknown>)
        .filter(([key]) => key !== '$schema' && key !== '$id')
        .map(([key, value]) => [key, normalise(value)]),
    );
  }
  return schema;
}

type Json = Record<string, any>;

/** The JSON schema of a route's request body or response, by status. */
const bodySchema = (operation: Json) => operation.requestBody?.content?.['application/json']?.schema;
const responseSchema = (operation: Json, status: string) =>
  operation.responses?.[status]?.content?.['application/json']?.schema;

/** Path and query parameters folded back into an object schema, as the operation's input has them. */
function parametersAsSchema(operation: Json, where: 'query' | 'path'): { properties: Json; required: string[] } {
  const params = (operation.parameters ?? []).filter((p: Json) => p.in === where);
  return {
    properties: Object.fromEntries(
      params.map((p: Json) => [
        p.name,
        p.description === undefined ? p.schema : { ...p.schema, description: p.description },
      ]),
    ),
    required: params.filter((p: Json) => p.required).map((p: Json) => p.name),
  };
}

describe('OpenAPI document', once, () => {
  let generated: Json;
  let committed: Json;
  let database: TestDb;
  let server: TestServer;
  let client: Client;
  let mcpTools: Awaited<ReturnType<Client['listTools']>>['tools'];

  before(async () => {
    generated = (await openApiDocument()) as Json;
    committed = JSON.parse(await readFile(COMMITTED, 'utf8')) as Json;
    database = await pglite.open();
    server = await startServer(database);
    ({ client } = await connectMcp(server.url));
    mcpTools = (await client.listTools()).tools;
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await database?.dispose();
  });

  test('the committed openapi/openapi.json is fresh', () => {
    assert.deepEqual(committed, generated, 'openapi/openapi.json is out of date: run npm run openapi');
  });

  test('GET /openapi.json serves the committed document, naming the address it listens on as its server', async () => {
    const r = await rest(server.url, 'GET', '/openapi.json');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const { servers, ...served } = r.body as Json;
    const { servers: committedServers, ...rest_ } = committed;
    assert.deepEqual(served, rest_, 'the served document differs from openapi/openapi.json: run npm run openapi');
    assert.deepEqual(
      servers.map((s: Json) => s.url),
      [server.url],
    );
    assert.deepEqual(
      committedServers.map((s: Json) => s.url),
      ['http://127.0.0.1:7000'],
      'the committed document names the default HOST and PORT',
    );
    assert.equal(servers[0].description, committedServers[0].description);
  });

  test('with PUBLIC_URL the served document names that URL as its server', async () => {
    const behindProxy = await startServer(database, { publicUrl: 'https://hub.example.org/devstream' });
    try {
      const r = await rest(behindProxy.url, 'GET', '/openapi.json');
      assert.equal(r.status, 200);
      assert.deepEqual(
        (r.body as Json).servers.map((s: Json) => s.url),
        ['https://hub.example.org/devstream'],
      );
    } finally {
      await behindProxy.close();
    }
  });

  test("passes Redocly's recommended ruleset: no errors, and no warning but the probes' (they answer no 4XX)", async () => {
    const { stdout } = await run(REDOCLY, ['lint', fileURLToPath(COMMITTED), '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as { totals: { errors: number }; problems: Json[] };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer}: ${p.message}`);
    assert.equal(report.totals.errors, 0, problems.join('\n'));
    assert.deepEqual(
      problems.filter((p) => !/^warn operation-4xx-response #\/paths\/~1(healthz|readyz)\/get\/responses:/.test(p)),
      [],
    );
  });

  test('is OpenAPI 3.1 with an operationId on every operation and the REST and tool paths', () => {
    assert.equal(generated.openapi, '3.1.0');
    assert.equal(typeof generated.info?.title, 'string');
    assert.match(generated.info?.version ?? '', /^\d+\.\d+\.\d+/);

    const ids: string[] = [];
    for (const [path, item] of Object.entries(generated.paths as Json)) {
      const methods = Object.keys(item).filter((k) => HTTP_METHODS.includes(k));
      assert.ok(methods.length > 0, `${path} has an operation`);
      for (const method of methods) {
        const operationId = item[method].operationId;
        assert.ok(
          typeof operationId === 'string' && operationId.length > 0,
          `${method.toUpperCase()} ${path} has an operationId`,
        );
        ids.push(operationId);
      }
    }
    assert.equal(new Set(ids).size, ids.length, `operationIds are unique: ${ids.join(', ')}`);

    const paths = Object.keys(generated.paths);
    for (const path of ['/api/v1/tasks', '/api/v1/tasks/{id}', '/api/v1/plans', '/api/v1/plans/{id}']) {
      assert.ok(paths.includes(path), `${path} is documented`);
    }
    assert.ok(generated.paths['/api/v1/tasks'].get && generated.paths['/api/v1/tasks'].post);
    assert.ok(generated.paths['/api/v1/tasks/{id}'].patch);
    assert.ok(generated.paths['/api/v1/plans'].get);
    assert.ok(generated.paths['/api/v1/plans/{id}'].get);
    assert.ok(mcpTools.length > 0);
    for (const tool of mcpTools) {
      assert.ok(generated.paths[`/api/v1/tools/${tool.name}`]?.post, `/api/v1/tools/${tool.name} is documented`);
    }
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/api/v1/tools/')).sort(),
      mcpTools.map((t) => `/api/v1/tools/${t.name}`).sort(),
      'a tool route for every MCP tool and no other',
    );
    assert.deepEqual(generated.components.securitySchemes.apiKey, {
      type: 'http',
      scheme: 'bearer',
      description: generated.components.securitySchemes.apiKey.description,
    });
    assert.deepEqual(generated.security, [{ apiKey: [] }], 'every route needs an API key (with AUTH=required)…');
    assert.deepEqual(generated.paths['/healthz'].get.security, [], '…but the probes');
    assert.match(generated.paths['/api/v1/keys'].post.description, /`admin` scope/);
    for (const path of ['/mcp', '/openapi.json', '/api/v1/tools/{name}']) {
      assert.ok(!paths.includes(path), `${path} is hidden (JSON-RPC, the document itself, the unknown-tool catch-all)`);
    }
  });

  test("every MCP tool route takes the tool's inputSchema and answers its outputSchema", () => {
    for (const tool of mcpTools) {
      const operation = generated.paths[`/api/v1/tools/${tool.name}`]?.post;
      assert.ok(operation, `${tool.name} is in the OpenAPI document`);
      assert.equal(operation.requestBody?.required, true, `${tool.name}: a request body`);
      assert.deepEqual(
        normalise(bodySchema(operation)),
        normalise(tool.inputSchema),
        `${tool.name}: request body = inputSchema`,
      );
      assert.ok(tool.outputSchema, `${tool.name} declares an outputSchema`);
      assert.deepEqual(
        normalise(responseSchema(operation, '200')),
        normalise(tool.outputSchema),
        `${tool.name}: 200 = outputSchema`,
      );
      for (const status of ['4XX', '5XX']) {
        assert.deepEqual(
          responseSchema(operation, status),
          { $ref: '#/components/schemas/Error' },
          `${tool.name}: ${status} is the Error body`,
        );
      }
    }
  });

  test("the resource routes document their operation's input (as path, query or body) and output", () => {
    const byName = new Map(operations.map((op) => [op.name, op]));
    const op = (name: string) => {
      const found = byName.get(name);
      assert.ok(found, name);
      return found;
    };
    const input = (name: string) => normalise(toolJsonSchema(op(name).input, 'input')) as Json;
    const output = (name: string) => normalise(toolJsonSchema(op(name).output, 'output'));
    const without = (schema: Json, field: string) => {
      const { [field]: _dropped, ...properties } = schema.properties;
      return { ...schema, properties, required: (schema.required ?? []).filter((f: string) => f !== field) };
    };
    const paths = generated.paths as Json;

    const listTasks = paths['/api/v1/tasks'].get;
    const listTasksInput = input('devstream_list_tasks');
    assert.deepEqual(parametersAsSchema(listTasks, 'query'), {
      properties: listTasksInput.properties,
      required: listTasksInput.required ?? [],
    });
    assert.deepEqual(normalise(responseSchema(listTasks, '200')), output('devstream_list_tasks'));

    const createTask = paths['/api/v1/tasks'].post;
    assert.deepEqual(normalise(bodySchema(createTask)), input('devstream_create_task'));
    assert.deepEqual(normalise(responseSchema(createTask, '201')), output('devstream_create_task'));
    assert.equal(createTask.responses['200'], undefined, 'the resource create answers 201, not 200');

    const updateTask = paths['/api/v1/tasks/{id}'].patch;
    const updateInput = input('devstream_update_task');
    assert.deepEqual(parametersAsSchema(updateTask, 'path'), {
      properties: { id: updateInput.properties.task_id },
      required: ['id'],
    });
    assert.deepEqual(normalise(bodySchema(updateTask)), without(updateInput, 'task_id'));
    assert.deepEqual(normalise(responseSchema(updateTask, '200')), output('devstream_update_task'));

    const listPlans = paths['/api/v1/plans'].get;
    const listPlansInput = input('devstream_list_plans');
    assert.deepEqual(parametersAsSchema(listPlans, 'query'), {
      properties: listPlansInput.properties,
      required: listPlansInput.required ?? [],
    });
    assert.deepEqual(normalise(responseSchema(listPlans, '200')), output('devstream_list_plans'));

    const getPlan = paths['/api/v1/plans/{id}'].get;
    assert.deepEqual(parametersAsSchema(getPlan, 'path'), {
      properties: input('devstream_get_plan').properties,
      required: ['id'],
    });
    assert.deepEqual(normalise(responseSchema(getPlan, '200')), output('devstream_get_plan'));

    for (const [path, item] of Object.entries(paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(item as Json)) {
        for (const status of ['4XX', '5XX']) {
          assert.deepEqual(
            responseSchema(operation, status),
            { $ref: '#/components/schemas/Error' },
            `${method} ${path} ${status}`,
          );
        }
      }
    }
    const error = generated.components?.schemas?.Error;
    assert.deepEqual(error?.required, ['error']);
    assert.deepEqual(error?.properties?.error?.required, ['code', 'message', 'details']);
    assert.ok(error?.properties?.error?.properties?.code?.enum.includes('VALIDATION_ERROR'));
  });
});
