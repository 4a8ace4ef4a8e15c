import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import type { OAuthConfig } from '../src/config.js';
import type { FastifyRequest } from 'fastify';
import { DashboardFiles } from '../src/http/dashboard.js';
import { operations, tools } from '../src/operations/index.js';
import type { AnyOperation, HttpRoute } from '../src/operations/operation.js';
import { freePort } from '../support/free-port.js';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { eventually } from './helpers/eventually.js';
import { wrenText } from './helpers/graph-fixture.js';
import { createKey } from './helpers/keys.js';
import { NOTIFICATION_WAIT_MS } from './helpers/mcp-notifications.js';
import { HOOK_EVENTS, type HookEvent } from '../src/domain/hooks/hook-input.js';
import { oauthConfig, startIdp, type TestIdp } from './helpers/oidc-provider.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';

/**
 * Issue 24 item 3: a key limited to project Apollo and code graph wren (and kestrel, which only an
 * analysis job makes), against data in Apollo and Borealis and graphs wren and sparrow. Every
 * operation (a case per operation: a new one without a case fails), over REST and a real MCP
 * client, the resources, prompts, completions and the hook endpoint: the limited key sees nothing
 * of Borealis or sparrow, and an unlimited key sees both. Run twice per backend: with API keys so
 * limited, and with an IdP's access tokens limited by their projects and repos claims
 * (OAUTH_PROJECTS_CLAIM, OAUTH_REPOS_CLAIM) — the same cases, the same answers.
 */

const ADMIN = 'test-admin-token-0123456789abcdefghijklmnop';
const HOOK = '/api/v1/hooks/claude-code';

type Outcome = { via: string; ok: boolean; status: number | undefined; code: string | undefined; body: any };

/**
 * An operation called over REST with `args`: by `route` (default: its first REST route, else its
 * tool mirror), or by its tool mirror POST /api/v1/tools/{name} (`'tool'`).
 */
async function viaRest(
  url: string,
  op: AnyOperation,
  token: string,
  args: Record<string, unknown>,
  route: HttpRoute | 'tool' | undefined = op.routes[0],
): Promise<Outcome> {
  let answer;
  if (route === undefined || route === 'tool') {
    answer = await rest(url, 'POST', `/api/v1/tools/${op.name}`, args, bearer(token));
  } else {
    const remaining = { ...args };
    const path = route.path.replace(/:(\w+)/g, (_, param: string) => {
      const field = route.params?.[param] ?? param;
      const value = String(remaining[field]);
      delete remaining[field];
      return encodeURIComponent(value);
    });
    const inQuery = route.method === 'GET' || route.method === 'DELETE';
    const queryName = (field: string) => Object.entries(route.query ?? {}).find(([, f]) => f === field)?.[0] ?? field;
    const query = inQuery
      ? new URLSearchParams(
          Object.entries(remaining).map(([k, v]): [string, string] => [queryName(k), String(v)]),
        ).toString()
      : '';
    answer = await rest(
      url,
      route.method,
      `/api/v1${path}${query ? `?${query}` : ''}`,
      inQuery ? undefined : remaining,
      bearer(token),
    );
  }
  const ok = answer.status < 300;
  const via =
    route === undefined || route === 'tool' ? `POST /api/v1/tools/${op.name}` : `${route.method} ${route.path}`;
  return { via, ok, status: answer.status, code: ok ? undefined : answer.body?.error?.code, body: answer.body };
}

/** Every REST way to call `op`: each of its routes, and its tool mirror when it is a tool. */
const restWays = (op: AnyOperation): Array<HttpRoute | 'tool'> => [
  ...op.routes,
  ...(tools.includes(op) ? (['tool'] as const) : []),
];

/** A tool called over MCP: its structuredContent, or the code of its isError result. */
async function viaMcp(client: Client, op: AnyOperation, args: Record<string, unknown>): Promise<Outcome> {
  const result = (await client.callTool({ name: op.name, arguments: args })) as any;
  if (result.isError) {
    const code = /^❌ Error [^:]+: ([A-Z_]+):/.exec(result.content[0].text)?.[1];
    return { via: 'mcp', ok: false, status: undefined, code, body: result.content };
  }
  return { via: 'mcp', ok: true, status: undefined, code: undefined, body: result.structuredContent };
}

async function fixture() {
  const base = await mkdtemp(join(tmpdir(), 'dsh-project-limits-'));
  for (const folder of ['kestrel', 'finch-src']) {
    await mkdir(join(base, folder), { recursive: true });
    await writeFile(
      join(base, folder, 'index.ts'),
      `export function ${folder.replace('-', '')}Main() {\n  return 1;\n}\n`,
    );
  }
  return base;
}

/** The limited callers' IdP clients (token runs): each one's scopes and the limits its tokens' claims carry. */
const LIMITED_CLIENTS = {
  'limited-bot': {
    scope: 'devstream:read devstream:write',
    claims: { projects: ['Apollo'], repos: ['wren', 'kestrel'] },
  },
  'limited-admin-bot': {
    scope: 'devstream:read devstream:write devstream:admin',
    claims: { projects: 'Apollo', repos: 'wren' },
  },
  'limited-two-bot': { scope: 'devstream:read devstream:write', claims: { projects: 'Apollo, Cygnus', repos: ['*'] } },
};

for (const backend of backends)
  for (const credential of ['key', 'token'] as const)
    describe(`${credential}s limited to projects and code graphs (${backend.name})`, () => {
      let idp: TestIdp | undefined;
      let database: TestDb;
      let server: TestServer;
      let capturing: TestServer;
      let root: string;
      let full: string;
      let limited: string;
      let limitedAdmin: string;
      let limitedTwo: string;
      let limitedMcp: Client;
      let fullMcp: Client;
      const ids: Record<string, string> = {};
      /** The served app's route table (AppDeps.onRoute). */
      const routeTable: Array<{ method: string; url: string }> = [];
      /** What no answer to the limited key may mention (beyond what its own request named). */
      let secrets: string[];

      const call = async (name: string, who: 'limited' | 'full' | 'limitedAdmin' | 'limitedTwo', args = {}) => {
        const op = operations.find((o) => o.name === name)!;
        const token = { limited, full, limitedAdmin, limitedTwo }[who];
        const outcomes: Outcome[] = [];
        for (const way of restWays(op)) outcomes.push(await viaRest(server.url, op, token, args, way));
        const client = who === 'limited' ? limitedMcp : who === 'full' ? fullMcp : undefined;
        if (client && tools.includes(op)) outcomes.push(await viaMcp(client, op, args));
        if (who !== 'full') {
          // Nothing outside the key's limits in any answer, beyond what the request itself named.
          const asked = JSON.stringify(args).toLowerCase();
          for (const o of outcomes)
            for (const secret of secrets.filter((s) => !asked.includes(s.toLowerCase())))
              assert.doesNotMatch(
                JSON.stringify(o.body),
                new RegExp(secret, 'i'),
                `${name} via ${o.via} leaked ${secret}`,
              );
        }
        return outcomes;
      };
      const ok = (outcomes: Outcome[]) => {
        for (const o of outcomes) assert.ok(o.ok, `${o.via}: ${JSON.stringify(o.body)}`);
        return outcomes.map((o) => o.body);
      };
      const refused = (outcomes: Outcome[], code: 'NOT_FOUND' | 'FORBIDDEN' | 'VALIDATION_ERROR') => {
        const status = { NOT_FOUND: 404, FORBIDDEN: 403, VALIDATION_ERROR: 400 }[code];
        for (const o of outcomes) {
          assert.equal(o.ok, false, `${o.via}: ${JSON.stringify(o.body)}`);
          assert.equal(o.code, code, `${o.via}: ${JSON.stringify(o.body)}`);
          if (o.via !== 'mcp') assert.equal(o.status, status, o.via);
        }
      };
      const projectsOf = (tasks: Array<{ project: string }>) => new Set(tasks.map((t) => t.project));

      before(async () => {
        database = await backend.open();
        root = await fixture();
        // Token runs: the hub is an OAuth resource server of a real IdP, and the limited callers are its
        // machine clients, limited by their tokens' projects and repos claims instead of a key's limits.
        let port = 0;
        let oauth: { publicUrl: string; oauth: OAuthConfig } | undefined;
        if (credential === 'token') {
          port = await freePort();
          const hub = `http://127.0.0.1:${port}`;
          idp = await startIdp(() => [hub], 'http://127.0.0.1:1/callback', { machineClients: LIMITED_CLIENTS });
          oauth = { publicUrl: hub, oauth: { ...oauthConfig(idp.issuer, hub), reposClaim: 'repos' } };
        }
        const config = {
          ...(oauth ? { publicUrl: oauth.publicUrl } : {}),
          auth: { mode: 'required' as const, adminToken: ADMIN, ...(oauth ? { oauth: oauth.oauth } : {}) },
          graphs: { retention: 5, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [root] },
        };
        server = await startServer(database, config, { onRoute: (route) => routeTable.push(route) }, port);
        capturing = await startServer(database, {
          ...config,
          hooks: { contextTokens: 1_500, capture: true, sessionTtlMs: 3_600_000 },
        });
        full = await createKey(server.url, ADMIN, 'full', ['read', 'write']);
        const limitedKey = async (name: string, body: Record<string, unknown>) => {
          const made = await rest(server.url, 'POST', '/api/v1/keys', { name, ...body }, bearer(ADMIN));
          assert.equal(made.status, 201, JSON.stringify(made.body));
          return made.body;
        };
        const made = await limitedKey('limited', {
          scopes: ['read', 'write'],
          projects: ['Apollo', 'apollo'],
          repos: ['wren', 'kestrel'],
        });
        assert.deepEqual(made.projects, ['Apollo'], 'each project once, the first spelling kept');
        assert.deepEqual(made.repos, ['wren', 'kestrel']);
        limited = made.token;
        limitedAdmin = (
          await limitedKey('limited-admin', {
            scopes: ['read', 'write', 'admin'],
            projects: ['Apollo'],
            repos: ['wren'],
          })
        ).token;
        limitedTwo = (await limitedKey('limited-two', { scopes: ['read', 'write'], projects: ['Apollo', 'Cygnus'] }))
          .token;
        if (idp) {
          const token = (client: keyof typeof LIMITED_CLIENTS) =>
            idp!.clientCredentials(client, LIMITED_CLIENTS[client].scope, server.url);
          limited = await token('limited-bot');
          limitedAdmin = await token('limited-admin-bot');
          limitedTwo = await token('limited-two-bot');
        }

        const post = async (path: string, body: unknown) => {
          const answer = await rest(server.url, 'POST', path, body, bearer(full));
          assert.equal(answer.status, 201, JSON.stringify(answer.body));
          return answer.body;
        };
        ids.taskA = (
          await post('/api/v1/tasks', taskInput({ title: 'Apollo thruster task', project: 'Apollo' }))
        ).task.id;
        ids.taskB = (
          await post('/api/v1/tasks', taskInput({ title: 'Borealis hidden task', project: 'Borealis' }))
        ).task.id;
        const memory = async (content: string, project: string) =>
          (await post('/api/v1/memories', { content, content_type: 'decision', project, keywords: ['retry'] }))
            .memory_id;
        ids.memA = await memory('Apollo retry budget: three attempts', 'Apollo');
        ids.memB = await memory('Borealis retry budget: hidden decision', 'Borealis');
        ids.memDel1 = await memory('Apollo retry note to delete one', 'Apollo');
        ids.memDel2 = await memory('Apollo retry note to delete two', 'Apollo');
        for (const repo of ['wren', 'sparrow']) {
          const uploaded = await fetch(`${server.url}/api/v1/graphs?repo=${repo}&branch=main`, {
            method: 'POST',
            body: wrenText,
            headers: { 'content-type': 'application/json', ...bearer(full) },
          });
          const text = await uploaded.text();
          assert.equal(uploaded.status, 201, text);
          ids[repo] = (JSON.parse(text) as { graphId: string }).graphId;
        }
        const plans = await rest(server.url, 'GET', '/api/v1/plans', undefined, bearer(full));
        for (const p of plans.body.plans) ids[`plan${p.title}`] = p.id;
        secrets = ['Borealis', 'sparrow', ids.sparrow!, ids.taskB!, ids.memB!, ids.planBorealis!];
        limitedMcp = (await connectMcp(server.url, '/mcp', bearer(limited))).client;
        fullMcp = (await connectMcp(server.url, '/mcp', bearer(full))).client;
      });
      after(async () => {
        await limitedMcp?.close();
        await fullMcp?.close();
        await capturing?.close();
        await server?.close();
        await idp?.close();
        await database?.dispose();
        if (root) await rm(root, { recursive: true, force: true });
      });

      /** One case per operation: what the limited key gets, beside what the unlimited one gets. */
      const cases: Record<string, () => Promise<void>> = {
        devstream_list_tasks: async () => {
          for (const body of ok(await call('devstream_list_tasks', 'limited'))) {
            assert.deepEqual(projectsOf(body.tasks), new Set(['Apollo']));
            assert.equal(body.total, body.tasks.length, 'the total counts only what the key may see');
          }
          for (const body of ok(await call('devstream_list_tasks', 'limited', { project: 'Borealis' })))
            assert.deepEqual([body.tasks, body.total], [[], 0]);
          for (const body of ok(await call('devstream_list_tasks', 'full')))
            assert.deepEqual(projectsOf(body.tasks), new Set(['Apollo', 'Borealis']));
        },
        devstream_create_task: async () => {
          refused(
            await call('devstream_create_task', 'limited', taskInput({ title: 'x', project: 'Borealis' })),
            'FORBIDDEN',
          );
          // Auto-creation outside the key's projects: refused, and nothing created.
          refused(
            await call('devstream_create_task', 'limited', taskInput({ title: 'x', project: 'Cygnus' })),
            'FORBIDDEN',
          );
          for (const body of ok(
            await call('devstream_create_task', 'limited', taskInput({ title: 'A2', project: 'apollo' })),
          ))
            assert.equal(body.task.project, 'Apollo');
          // No project named: the key's only project (DEFAULT_PROJECT "default" is not one of its).
          for (const body of ok(await call('devstream_create_task', 'limited', taskInput({ title: 'A3' }))))
            assert.equal(body.task.project, 'Apollo');
          // A key of several projects, none of them DEFAULT_PROJECT, must name one.
          const two = await call('devstream_create_task', 'limitedTwo', taskInput({ title: 'A4' }));
          refused(two, 'VALIDATION_ERROR');
          assert.match(JSON.stringify(two[0]!.body), /project/);
          for (const body of ok(
            await call('devstream_create_task', 'full', taskInput({ title: 'B2', project: 'Borealis' })),
          ))
            assert.equal(body.task.project, 'Borealis');
          const plans = await rest(server.url, 'GET', '/api/v1/plans', undefined, bearer(full));
          assert.ok(!plans.body.plans.some((p: { title: string }) => p.title === 'Cygnus'), 'Cygnus was not created');
        },
        devstream_update_task: async () => {
          refused(
            await call('devstream_update_task', 'limited', { task_id: ids.taskB, status: 'active', notes: 'n' }),
            'NOT_FOUND',
          );
          refused(
            await call('devstream_update_task', 'limited', { task_id: ids.taskB, status: 'failed' }),
            'NOT_FOUND',
          );
          const b = await rest(server.url, 'GET', '/api/v1/tasks?project=Borealis', undefined, bearer(full));
          assert.ok(
            b.body.tasks.every((t: { status: string }) => t.status === 'pending'),
            'the other task is untouched',
          );
          for (const body of ok(
            await call('devstream_update_task', 'limited', { task_id: ids.taskA, status: 'active' }),
          ))
            assert.equal(body.task.status, 'active');
          ok(await call('devstream_update_task', 'full', { task_id: ids.taskB, status: 'pending' }));
        },
        devstream_list_plans: async () => {
          for (const body of ok(await call('devstream_list_plans', 'limited')))
            assert.deepEqual([body.plans.map((p: { title: string }) => p.title), body.total], [['Apollo'], 1]);
          for (const body of ok(await call('devstream_list_plans', 'full')))
            assert.ok(body.plans.some((p: { title: string }) => p.title === 'Borealis'));
        },
        devstream_get_plan: async () => {
          refused(await call('devstream_get_plan', 'limited', { id: ids.planBorealis }), 'NOT_FOUND');
          for (const body of ok(await call('devstream_get_plan', 'limited', { id: ids.planApollo })))
            assert.equal(body.plan.title, 'Apollo');
          ok(await call('devstream_get_plan', 'full', { id: ids.planBorealis }));
        },
        devstream_store_memory: async () => {
          const memory = (project?: string) => ({
            content: `A note ${project ?? 'none'}`,
            content_type: 'learning',
            ...(project ? { project } : {}),
          });
          refused(await call('devstream_store_memory', 'limited', memory('Borealis')), 'FORBIDDEN');
          refused(await call('devstream_store_memory', 'limited', memory('Cygnus')), 'FORBIDDEN');
          for (const body of ok(await call('devstream_store_memory', 'limited', memory('Apollo'))))
            assert.equal(body.project, 'Apollo');
          for (const body of ok(await call('devstream_store_memory', 'limited', memory())))
            assert.equal(body.project, 'Apollo');
          refused(await call('devstream_store_memory', 'limitedTwo', memory()), 'VALIDATION_ERROR');
          ok(await call('devstream_store_memory', 'full', memory('Borealis')));
        },
        devstream_search_memory: async () => {
          for (const body of ok(await call('devstream_search_memory', 'limited', { query: 'retry budget' }))) {
            assert.ok(body.results.some((r: { memory_id: string }) => r.memory_id === ids.memA));
            assert.deepEqual(new Set(body.results.map((r: { project: string }) => r.project)), new Set(['Apollo']));
          }
          for (const body of ok(
            await call('devstream_search_memory', 'limited', { query: 'retry budget', project: 'Borealis' }),
          ))
            assert.deepEqual(body.results, []);
          for (const body of ok(await call('devstream_search_memory', 'full', { query: 'retry budget' })))
            assert.ok(body.results.some((r: { memory_id: string }) => r.memory_id === ids.memB));
        },
        devstream_delete_memory: async () => {
          refused(await call('devstream_delete_memory', 'limited', { memory_id: ids.memB }), 'NOT_FOUND');
          const still = await rest(server.url, 'GET', `/api/v1/memories/${ids.memB}`, undefined, bearer(full));
          assert.equal(still.status, 200, 'the other project’s memory stays');
          const op = operations.find((o) => o.name === 'devstream_delete_memory')!;
          assert.ok((await viaRest(server.url, op, limited, { memory_id: ids.memDel1 })).ok);
          assert.ok((await viaMcp(limitedMcp, op, { memory_id: ids.memDel2 })).ok);
        },
        devstream_get_memory: async () => {
          refused(await call('devstream_get_memory', 'limited', { memory_id: ids.memB }), 'NOT_FOUND');
          for (const body of ok(await call('devstream_get_memory', 'limited', { memory_id: ids.memA })))
            assert.equal(body.memory.project, 'Apollo');
        },
        devstream_list_graphs: async () => {
          for (const body of ok(await call('devstream_list_graphs', 'limited')))
            assert.deepEqual(
              body.graphs.map((g: { repo: string }) => g.repo),
              ['wren'],
            );
          for (const body of ok(await call('devstream_list_graphs', 'full')))
            assert.deepEqual(
              body.graphs.map((g: { repo: string }) => g.repo),
              ['sparrow', 'wren'],
            );
        },
        devstream_delete_graph: async () => {
          refused(await call('devstream_delete_graph', 'limited', { graphId: ids.sparrow }), 'NOT_FOUND');
          const graphs = await rest(server.url, 'GET', '/api/v1/graphs', undefined, bearer(full));
          assert.ok(
            graphs.body.graphs.some((g: { repo: string }) => g.repo === 'sparrow'),
            'sparrow stays',
          );
        },
        devstream_graph_summaries: async () => {
          const hashes = { codeHashes: ['0'.repeat(32)] };
          refused(await call('devstream_graph_summaries', 'limited', { repo: 'sparrow', ...hashes }), 'FORBIDDEN');
          for (const body of ok(await call('devstream_graph_summaries', 'limited', { repo: 'wren', ...hashes })))
            assert.deepEqual([body.repo, body.summaries], ['wren', []]);
          ok(await call('devstream_graph_summaries', 'full', { repo: 'sparrow', ...hashes }));
        },
        resolve_context: async () => {
          refused(
            await call('resolve_context', 'limited', { task: 'how are retries delayed', repo: 'sparrow' }),
            'NOT_FOUND',
          );
          refused(
            await call('resolve_context', 'limited', { task: 'how are retries delayed', repo: ids.sparrow }),
            'NOT_FOUND',
          );
          // Without a repo: the only graph the key sees (the unlimited key sees two, and must name one).
          for (const body of ok(await call('resolve_context', 'limited', { task: 'how are retries delayed' })))
            assert.match(body.packet, new RegExp(`GRAPH ${ids.wren}`));
          refused(await call('resolve_context', 'full', { task: 'how are retries delayed' }), 'VALIDATION_ERROR');
          ok(await call('resolve_context', 'full', { task: 'how are retries delayed', repo: 'sparrow' }));
        },
        find_symbols: async () => {
          refused(await call('find_symbols', 'limited', { query: 'backoffDelay', repo: 'sparrow' }), 'NOT_FOUND');
          for (const body of ok(await call('find_symbols', 'limited', { query: 'backoffDelay', repo: 'wren' })))
            assert.equal(body.provenance.repo, 'wren');
          ok(await call('find_symbols', 'full', { query: 'backoffDelay', repo: 'sparrow' }));
        },
        get_node: async () => {
          refused(await call('get_node', 'limited', { node: 'backoffDelay', repo: 'sparrow' }), 'NOT_FOUND');
          ok(await call('get_node', 'limited', { node: 'backoffDelay', repo: 'wren' }));
          ok(await call('get_node', 'full', { node: 'backoffDelay', repo: 'sparrow' }));
        },
        impact: async () => {
          refused(await call('impact', 'limited', { target: 'backoffDelay', repo: 'sparrow' }), 'NOT_FOUND');
          ok(await call('impact', 'limited', { target: 'backoffDelay', repo: 'wren' }));
          ok(await call('impact', 'full', { target: 'backoffDelay', repo: 'sparrow' }));
        },
        repo: async () => {
          for (const body of ok(await call('repo', 'limited', { action: 'list' })))
            assert.deepEqual(
              body.repos.map((g: { repo: string }) => g.repo),
              ['wren'],
            );
          refused(await call('repo', 'limited', { action: 'health', repo: 'sparrow' }), 'NOT_FOUND');
          refused(
            await call('repo', 'limited', { action: 'freshness', repo: 'sparrow', commit: 'abc1234' }),
            'NOT_FOUND',
          );
          ok(await call('repo', 'limited', { action: 'health', repo: 'wren' }));
          // An analysis stores a graph: outside the key's repos it is refused, as an upload is.
          refused(
            await call('repo', 'limited', { action: 'analyze', path: join(root, 'finch-src'), repo: 'sparrow' }),
            'FORBIDDEN',
          );
          refused(await call('repo', 'limited', { action: 'analyze', path: join(root, 'finch-src') }), 'FORBIDDEN');
          const op = operations.find((o) => o.name === 'repo')!;
          const queued = await viaRest(server.url, op, limited, { action: 'analyze', path: join(root, 'kestrel') });
          assert.ok(queued.ok, JSON.stringify(queued.body));
          ids.kestrelJob = queued.body.job.jobId;
          const other = await viaRest(server.url, op, full, {
            action: 'analyze',
            path: join(root, 'finch-src'),
            repo: 'finch',
          });
          assert.ok(other.ok, JSON.stringify(other.body));
          ids.finchJob = other.body.job.jobId;
          secrets.push(ids.finchJob!, 'finch');
        },
        devstream_get_job: async () => {
          refused(await call('devstream_get_job', 'limited', { jobId: ids.finchJob }), 'NOT_FOUND');
          for (const body of ok(await call('devstream_get_job', 'limited', { jobId: ids.kestrelJob })))
            assert.equal(body.job.params.repo, 'kestrel');
          ok(await call('devstream_get_job', 'full', { jobId: ids.finchJob }));
        },
        devstream_create_key: async () => {
          // A limited admin key makes keys within its limits only, and passes them on.
          const inherited = ok(
            await call('devstream_create_key', 'limitedAdmin', { name: 'child', scopes: ['read'] }),
          )[0];
          assert.deepEqual([inherited.projects, inherited.repos], [['apollo'], ['wren']]);
          refused(
            await call('devstream_create_key', 'limitedAdmin', {
              name: 'c2',
              scopes: ['read'],
              projects: ['Borealis'],
            }),
            'FORBIDDEN',
          );
          refused(
            await call('devstream_create_key', 'limitedAdmin', { name: 'c3', scopes: ['read'], repos: ['sparrow'] }),
            'FORBIDDEN',
          );
          const bad = async (body: Record<string, unknown>, field: string) => {
            const answer = await rest(
              server.url,
              'POST',
              '/api/v1/keys',
              { name: 'bad', scopes: ['read'], ...body },
              bearer(ADMIN),
            );
            assert.equal(answer.status, 400, JSON.stringify(answer.body));
            assert.ok(
              answer.body.error.details.issues.some((i: { field: string }) => i.field.startsWith(field)),
              JSON.stringify(answer.body),
            );
          };
          await bad({ projects: [] }, 'projects');
          await bad({ projects: ['  '] }, 'projects');
          await bad({ projects: Array.from({ length: 101 }, (_, i) => `p${i}`) }, 'projects');
          await bad({ repos: ['x'.repeat(201)] }, 'repos');
          await bad({ repos: 'wren' }, 'repos');
        },
        devstream_list_keys: async () => {
          // A limited admin key sees only keys within its own limits (Apollo, wren): not the unlimited
          // key, nor one that also reaches kestrel or Cygnus.
          const [body] = ok(await call('devstream_list_keys', 'limitedAdmin'));
          const names = body.keys.map((k: any) => k.name);
          assert.ok(names.includes('limited-admin'), JSON.stringify(names));
          for (const hidden of ['full', 'limited', 'limited-two'])
            assert.ok(
              !names.includes(hidden),
              `${hidden} is beyond the limited admin's limits: ${JSON.stringify(names)}`,
            );
          const all = await rest(server.url, 'GET', '/api/v1/keys', undefined, bearer(ADMIN));
          const byName = Object.fromEntries(all.body.keys.map((k: any) => [k.name, k]));
          assert.deepEqual([byName.limited.projects, byName.limited.repos], [['Apollo'], ['wren', 'kestrel']]);
          assert.deepEqual([byName.full.projects, byName.full.repos], [null, null]);
        },
        devstream_revoke_key: async () => {
          // A key beyond its limits is absent to it (404), and stays live.
          refused(await call('devstream_revoke_key', 'limitedAdmin', { name: 'full' }), 'NOT_FOUND');
          refused(await call('devstream_revoke_key', 'limitedAdmin', { name: 'limited' }), 'NOT_FOUND');
          assert.equal((await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(full))).status, 200);
          assert.equal((await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(limited))).status, 200);
          ok(await call('devstream_revoke_key', 'limitedAdmin', { name: 'child' }));
        },
        devstream_whoami: async () => {
          const [body] = ok(await call('devstream_whoami', 'limited'));
          assert.equal(body.name, credential === 'token' ? 'limited-bot' : 'limited', 'the credential under test');
          assert.deepEqual([body.projects, body.repos], [['apollo'], ['wren', 'kestrel']]);
          const [all] = ok(await call('devstream_whoami', 'full'));
          assert.deepEqual([all.projects, all.repos], [null, null]);
        },
      };

      it('every operation has a case here (a new operation must say what a limited key gets)', () => {
        assert.deepEqual(operations.map((o) => o.name).sort(), Object.keys(cases).sort());
      });

      it('every route of the route table is an operation’s (its case calls each), has its own test here, or holds no project data', () => {
        const covered = new Map<string, string>();
        for (const op of operations) {
          for (const route of op.routes) covered.set(`${route.method} /api/v1${route.path}`, op.name);
          if (tools.includes(op)) covered.set(`POST /api/v1/tools/${op.name}`, op.name);
        }
        const ownTests: Record<string, string> = {
          'POST /api/v1/graphs': 'graph uploads',
          'POST /api/v1/hooks/claude-code': 'the hook endpoint, every hook event',
          'POST /mcp': 'tools (each case), resources, prompts and completions, subscriptions',
          'GET /mcp': 'resource updates on the 2025 stream',
          'DELETE /mcp': 'ends the caller’s own session only (sessions are bound to their key or subject)',
          'GET /metrics': '/metrics: every project’s figures, refused to limited callers',
        };
        // Nothing of any project: probes, the API description, the OAuth metadata, an unknown tool's 404.
        const noData = new Set([
          'GET /healthz',
          'GET /readyz',
          'GET /openapi.json',
          'GET /.well-known/oauth-protected-resource',
          'GET /.well-known/oauth-protected-resource/mcp',
          'POST /api/v1/tools/:name',
        ]);
        const dashboard = new DashboardFiles();
        const uncovered = routeTable
          .map(({ method, url }) => ({ method: method === 'HEAD' ? 'GET' : method, url }))
          .filter(({ method, url }) => {
            const key = `${method} ${url}`;
            return (
              !covered.has(key) &&
              !ownTests[key] &&
              !noData.has(key) &&
              !dashboard.has({ method, url } as FastifyRequest)
            );
          })
          .map(({ method, url }) => `${method} ${url}`);
        assert.deepEqual(uncovered, [], 'routes without a project-limits case');
        // Each operation route was in the table, so its case ran against a route the app serves.
        const served = new Set(routeTable.map((r) => `${r.method} ${r.url}`));
        for (const key of covered.keys()) assert.ok(served.has(key), `${key} is served`);
      });

      it('/metrics (every project’s figures) is refused to a limited admin; an unlimited admin reads it', async () => {
        const limitedScrape = await rest(server.url, 'GET', '/metrics', undefined, bearer(limitedAdmin));
        assert.equal(limitedScrape.status, 403, JSON.stringify(limitedScrape.body));
        assert.equal(limitedScrape.body.error.code, 'FORBIDDEN');
        assert.match(limitedScrape.body.error.message, /covers every project/);
        assert.equal((await rest(server.url, 'GET', '/metrics', undefined, bearer(ADMIN))).status, 200);
      });

      for (const op of operations) {
        it(`${op.name}${tools.includes(op) ? ' (REST and MCP)' : ' (REST)'}`, async () => {
          const run = cases[op.name];
          assert.ok(run, `no case for ${op.name}`);
          await run();
        });
      }

      it('graph uploads outside the key’s repos are 403; inside, 201', async () => {
        const upload = (repo: string) =>
          fetch(`${server.url}/api/v1/graphs?repo=${repo}&branch=main`, {
            method: 'POST',
            body: wrenText,
            headers: { 'content-type': 'application/json', ...bearer(limited) },
          });
        const refusedUpload = await upload('sparrow');
        assert.equal(refusedUpload.status, 403);
        assert.equal(((await refusedUpload.json()) as any).error.code, 'FORBIDDEN');
        assert.equal((await upload('robin')).status, 403, 'a new repo outside the list too');
        assert.equal((await upload('wren')).status, 201);
      });

      it('resources: lists and reads show only the key’s graphs and items; others are not found', async () => {
        const listed = await limitedMcp.listResources();
        const uris = listed.resources.map((r) => r.uri);
        assert.ok(uris.includes(`devlens://graph/${ids.wren}/meta`));
        assert.ok(!uris.includes(`devlens://graph/${ids.sparrow}/meta`));
        const repos = await limitedMcp.readResource({ uri: 'devlens://repos' });
        assert.doesNotMatch(JSON.stringify(repos), /sparrow/);
        const notFound = async (client: Client, uri: string) => {
          await assert.rejects(client.readResource({ uri }), (e) => e instanceof ProtocolError, uri);
        };
        // Each resource template the server lists, with an item outside the limits and one inside
        // (a new template must be added here).
        const items: Record<string, { outside: string; inside: string }> = {
          'devlens://graph/{graphId}/meta': { outside: ids.sparrow!, inside: ids.wren! },
          'devstream://task/{id}': { outside: ids.taskB!, inside: ids.taskA! },
          'devstream://plan/{id}': { outside: ids.planBorealis!, inside: ids.planApollo! },
          'devstream://memory/{id}': { outside: ids.memB!, inside: ids.memA! },
        };
        const templates = (await limitedMcp.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
        assert.deepEqual(templates.sort(), Object.keys(items).sort());
        for (const [template, { outside, inside }] of Object.entries(items)) {
          const uri = (id: string) => template.replace(/\{\w+\}/, id);
          await notFound(limitedMcp, uri(outside));
          const full = await fullMcp.readResource({ uri: uri(outside) });
          assert.equal(full.contents.length, 1, `the unlimited key reads ${uri(outside)}`);
          assert.equal((await limitedMcp.readResource({ uri: uri(inside) })).contents.length, 1, uri(inside));
        }
      });

      it('resource updates: a limited key hears only its own tasks, on a 2026 listen stream and a 2025 subscription', async () => {
        const own = `devstream://task/${ids.taskA}`;
        const other = `devstream://task/${ids.taskB}`;
        const { client: modern } = await connectMcp(server.url, '/mcp', bearer(limited), { era: 'modern' });
        const { client: legacy } = await connectMcp(server.url, '/mcp', bearer(limited));
        try {
          const heard: Record<string, string[]> = { modern: [], legacy: [] };
          const ownHeard = (label: 'modern' | 'legacy', client: Client) =>
            new Promise<void>((resolve) =>
              client.setNotificationHandler('notifications/resources/updated', (n) => {
                heard[label]!.push(n.params.uri);
                if (n.params.uri === own) resolve();
              }),
            );
          const both = Promise.all([ownHeard('modern', modern), ownHeard('legacy', legacy)]);
          // The other project's task is dropped from the listen filter: the acknowledgement shows what is honoured.
          const subscription = await modern.listen({ resourceSubscriptions: [other, own] });
          assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [own]);
          await legacy.subscribeResource({ uri: other });
          await legacy.subscribeResource({ uri: own });
          await new Promise((resolve) => setTimeout(resolve, 200)); // the 2025 session's GET stream opens
          // The other task changes first, then the key's own (each put back after): each stream hears the second only.
          const statusOf = async (id: string | undefined) =>
            (await rest(server.url, 'GET', '/api/v1/tasks?limit=100', undefined, bearer(full))).body.tasks.find(
              (t: { id: string }) => t.id === id,
            ).status as string;
          const patch = async (id: string | undefined, status: string) => {
            const changed = await rest(server.url, 'PATCH', `/api/v1/tasks/${id}`, { status }, bearer(full));
            assert.equal(changed.status, 200, JSON.stringify(changed.body));
          };
          const was = { a: await statusOf(ids.taskA), b: await statusOf(ids.taskB) };
          await patch(ids.taskB, was.b === 'active' ? 'pending' : 'active');
          await patch(ids.taskA, was.a === 'active' ? 'pending' : 'active');
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            both,
            new Promise((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`no update of ${own}: ${JSON.stringify(heard)}`)),
                NOTIFICATION_WAIT_MS,
              );
            }),
          ]).finally(() => clearTimeout(timer));
          assert.deepEqual(heard, { modern: [own], legacy: [own] });
          await subscription.close();
          await patch(ids.taskB, was.b);
          await patch(ids.taskA, was.a);
        } finally {
          await modern.close();
          await legacy.close();
        }
      });

      it('prompts and completions: only the key’s projects and repos', async () => {
        const completions = async (client: Client, argument: string) =>
          (
            await client.complete({
              ref: { type: 'ref/prompt', name: argument === 'repo' ? 'explain-code' : 'resume' },
              argument: { name: argument, value: '' },
            })
          ).completion.values;
        assert.deepEqual(await completions(limitedMcp, 'project'), ['Apollo']);
        assert.ok((await completions(fullMcp, 'project')).includes('Borealis'));
        assert.ok(!(await completions(limitedMcp, 'repo')).includes('sparrow'));
        assert.ok((await completions(fullMcp, 'repo')).includes('sparrow'));
        const resume = await limitedMcp.getPrompt({ name: 'resume', arguments: { project: 'Borealis' } });
        assert.doesNotMatch(JSON.stringify(resume), /hidden/);
        const own = await limitedMcp.getPrompt({ name: 'resume', arguments: { project: 'Apollo' } });
        assert.match(JSON.stringify(own), /Apollo thruster task/);
        await assert.rejects(
          limitedMcp.getPrompt({
            name: 'explain-code',
            arguments: { question: 'how are retries delayed', repo: 'sparrow' },
          }),
          /NOT_FOUND/,
        );
        // Every prompt the server lists, named with another project or graph: nothing of it (a new prompt must be added here).
        const outside: Record<string, Record<string, string>> = {
          resume: { project: 'Borealis' },
          'record-decision': { decision: 'Use exponential backoff', project: 'Borealis' },
          'explain-code': { question: 'how are retries delayed', repo: 'sparrow' },
        };
        const prompts = (await limitedMcp.listPrompts()).prompts.map((p) => p.name);
        assert.deepEqual(prompts.sort(), Object.keys(outside).sort());
        for (const [name, args] of Object.entries(outside)) {
          const answer = await limitedMcp.getPrompt({ name, arguments: args }).catch((error: Error) => error.message);
          assert.doesNotMatch(JSON.stringify(answer), /hidden/, name);
        }
      });

      it('every hook event, capture on: another project or graph answers as one that does not exist would, and nothing of it shows', async () => {
        const hook = (token: string, project: string, repo: string, body: Record<string, unknown>, session: string) =>
          rest(
            capturing.url,
            'POST',
            `${HOOK}?project=${project}&repo=${repo}`,
            { session_id: session, cwd: `/home/dev/${project}`, ...body },
            bearer(token),
          );
        // A memory of each project about the same file, for PreToolUse on Read to find.
        for (const [project, content] of [
          ['Apollo', 'src/backoff.ts retries Apollo jobs three times'],
          ['Borealis', 'src/backoff.ts hidden: Borealis retries forever'],
        ] as const) {
          const stored = await rest(
            server.url,
            'POST',
            '/api/v1/memories',
            { content, content_type: 'learning', project },
            bearer(full),
          );
          assert.equal(stored.status, 201, JSON.stringify(stored.body));
        }
        const read = (project: string) => ({
          tool_name: 'Read',
          tool_input: { file_path: `/home/dev/${project}/src/backoff.ts` },
        });
        // Each event's inputs (typed by HOOK_EVENTS: a new event must have some here).
        const inputs: Record<HookEvent, Array<(project: string) => Record<string, unknown>>> = {
          SessionStart: [() => ({ source: 'startup' })],
          UserPromptSubmit: [() => ({ prompt: 'retry budget backoffDelay' })],
          PreToolUse: [read, () => ({ tool_name: 'Grep', tool_input: { pattern: 'backoffDelay' } })],
          PostToolUse: [read],
          Stop: [() => ({})],
          SessionEnd: [() => ({ reason: 'logout' })],
        };
        assert.deepEqual(Object.keys(inputs).sort(), [...HOOK_EVENTS].sort());
        let n = 0;
        for (const event of HOOK_EVENTS)
          for (const input of inputs[event]) {
            n += 1;
            const ask = (project: string, repo: string) =>
              hook(limited, project, repo, { hook_event_name: event, ...input(project) }, `ev-${n}-${project}`);
            const other = await ask('Borealis', 'sparrow');
            assert.equal(other.status, 200, `${event}: ${JSON.stringify(other.body)}`);
            const nowhere = await ask('Nowhere', 'nowhere');
            assert.equal(
              JSON.stringify(other.body),
              JSON.stringify(nowhere.body).replaceAll('Nowhere', 'Borealis').replaceAll('nowhere', 'sparrow'),
              `${event} ${n}`,
            );
            assert.doesNotMatch(JSON.stringify(other.body), /hidden|Borealis retries/, `${event} ${n}`);
          }
        // The same inputs in the caller's own project and graph do find its memory and symbols: the
        // above is the limit, not an empty hub; the unlimited key finds Borealis's.
        const context = (answer: { body: any }) =>
          (answer.body.hookSpecificOutput?.additionalContext as string | undefined) ?? '';
        const pre = (token: string, project: string, repo: string, body: Record<string, unknown>) =>
          hook(token, project, repo, { hook_event_name: 'PreToolUse', ...body }, `own-${++n}`);
        assert.match(context(await pre(limited, 'Apollo', 'wren', read('Apollo'))), /Apollo jobs three times/);
        assert.match(context(await pre(full, 'Borealis', 'sparrow', read('Borealis'))), /Borealis retries forever/);
        const grep = { tool_name: 'Grep', tool_input: { pattern: 'backoffDelay' } };
        assert.match(
          context(await pre(limited, 'Apollo', 'wren', grep)),
          /backoffDelay[\s\S]*in wren|wren[\s\S]*backoffDelay/,
        );
        assert.match(context(await pre(full, 'Borealis', 'sparrow', grep)), /sparrow/);
      });

      it('the Claude Code hook endpoint: no context from another project or graph; capture there refused silently', async () => {
        const hook = (target: TestServer, token: string, body: Record<string, unknown>, query = '') =>
          rest(
            target.url,
            'POST',
            `${HOOK}${query}`,
            { session_id: 's-1', cwd: '/home/dev/Borealis', ...body },
            bearer(token),
          );
        const context = (answer: { status: number; body: any }) => {
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          return (answer.body.hookSpecificOutput?.additionalContext as string | undefined) ?? '';
        };
        for (const query of ['', '?project=Borealis', '?project=Borealis&repo=sparrow']) {
          const start = context(
            await hook(server, limited, { hook_event_name: 'SessionStart', source: 'startup' }, query),
          );
          assert.doesNotMatch(start, /hidden|sparrow/i, query);
          const prompt = context(
            await hook(
              server,
              limited,
              { hook_event_name: 'UserPromptSubmit', prompt: 'retry budget backoffDelay' },
              query,
            ),
          );
          assert.doesNotMatch(prompt, /hidden|sparrow/i, query);
        }
        // Another project answers as one that does not exist would: its existence does not show.
        for (const event of [
          { hook_event_name: 'SessionStart', source: 'startup' },
          { hook_event_name: 'UserPromptSubmit', prompt: 'retry budget backoffDelay' },
        ]) {
          const named = (project: string) =>
            hook(server, limited, { session_id: `s-${project}`, ...event }, `?project=${project}`);
          assert.equal(
            context(await named('Borealis')),
            context(await named('Nowhere')).replaceAll('Nowhere', 'Borealis'),
            event.hook_event_name,
          );
        }
        // The unlimited key gets the Borealis context, so the above is the limit, not an empty hub.
        const fullStart = context(
          await hook(server, full, { session_id: 's-2', hook_event_name: 'SessionStart', source: 'startup' }),
        );
        assert.match(fullStart, /Borealis hidden task/);
        // Its own project and graph: context as usual.
        const own = context(
          await hook(
            server,
            limited,
            { session_id: 's-3', cwd: '/home/dev/wren', hook_event_name: 'SessionStart', source: 'startup' },
            '?project=Apollo',
          ),
        );
        assert.match(own, /Apollo thruster task/);
        assert.match(own, /wren/);

        // Capture on: a session in Borealis stores nothing for the limited key, and answers as usual.
        const session = { session_id: 'cap-1', cwd: '/home/dev/Borealis' };
        const read = {
          hook_event_name: 'PostToolUse',
          tool_name: 'Read',
          tool_input: { file_path: '/home/dev/Borealis/a.ts' },
        };
        assert.deepEqual((await hook(capturing, limited, { ...session, ...read }, '?project=Borealis')).body, {});
        assert.deepEqual(
          (
            await hook(
              capturing,
              limited,
              { ...session, hook_event_name: 'SessionEnd', reason: 'logout' },
              '?project=Borealis',
            )
          ).body,
          {},
        );
        const stored = await rest(
          server.url,
          'POST',
          '/api/v1/memories/search',
          { query: 'Claude Code session', content_type: 'context' },
          bearer(full),
        );
        assert.deepEqual(stored.body.results, [], 'nothing was captured into Borealis');
        // In its own project, capture works.
        const mine = { session_id: 'cap-2', cwd: '/home/dev/Apollo' };
        await hook(capturing, limited, { ...mine, ...read }, '?project=Apollo');
        await hook(capturing, limited, { ...mine, hook_event_name: 'SessionEnd', reason: 'logout' }, '?project=Apollo');
        const captured = await rest(
          server.url,
          'POST',
          '/api/v1/memories/search',
          { query: 'Claude Code session', content_type: 'context' },
          bearer(full),
        );
        assert.deepEqual(
          captured.body.results.map((r: { project: string }) => r.project),
          ['Apollo'],
        );
      });

      it('the analysis job the limited key queued stores its graph in its repos', async () => {
        const done = await eventually(async () => {
          const r = await rest(server.url, 'GET', `/api/v1/jobs/${ids.kestrelJob}`, undefined, bearer(limited));
          assert.equal(r.status, 200);
          return r.body.job.status === 'succeeded' || r.body.job.status === 'failed' ? r.body.job : undefined;
        }, 60_000);
        assert.equal(done.status, 'succeeded', done.error);
        const graphs = await rest(server.url, 'GET', '/api/v1/graphs', undefined, bearer(limited));
        assert.deepEqual(
          graphs.body.graphs.map((g: { repo: string }) => g.repo),
          ['kestrel', 'wren'],
        );
      });
    });
