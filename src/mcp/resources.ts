import { ResourceNotFoundError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/scopes.js';
import type { Context, Services } from '../domain/context.js';
import { graphMeta, listGraphs } from '../domain/graphs/graphs.js';
import { findMemory } from '../domain/memory/get-memory.js';
import { getTask } from '../domain/tasks/get-task.js';
import { findPlanSummary } from '../domain/tasks/list-plans.js';
import { requireRead } from './read-scope.js';

const REPOS = 'devlens://repos';
const META = /^devlens:\/\/graph\/([A-Za-z0-9._-]{1,64})\/meta$/;
/** `devstream://{kind}/{id}`: a task, plan or memory. */
const ITEM = /^devstream:\/\/(task|plan|memory)\/([^/]{1,64})$/;

/** Each kind's reader: the item, or null when there is none, the caller may not see it, or the id cannot be one. */
const ITEMS: Record<string, (ctx: Pick<Context, 'db' | 'caller'>, id: string) => Promise<object | null>> = {
  task: getTask,
  plan: findPlanSummary,
  memory: findMemory,
};

/** The URIs a 2025-era session subscribed to (resources/subscribe), by its server. */
const subscriptions = new WeakMap<Server, Set<string>>();

/** Whether this 2025-era session's server subscribed to `uri`. */
export const subscribedTo = (server: Server, uri: string): boolean => subscriptions.get(server)?.has(uri) ?? false;

/** Resource URIs a client may subscribe to at most (a session, or a listen stream). */
const MAX_SUBSCRIPTIONS = 1000;

/**
 * Of the URIs a 2026-era `subscriptions/listen` asks to hear updates of, the ones this caller may:
 * none without the read scope; for a caller limited to projects, only the items it may read now
 * (an update of another project's task would tell it the task exists), as `resources/subscribe`
 * decides in the 2025 era. At most MAX_SUBSCRIPTIONS.
 */
export async function audibleUris(services: Services, caller: Caller, uris: readonly string[]): Promise<string[]> {
  if (!caller.scopes.has('read')) return [];
  const asked = [...new Set(uris)].slice(0, MAX_SUBSCRIPTIONS);
  if (caller.projects === undefined) return asked;
  const reader = { db: services.db, caller };
  const seen = await Promise.all(
    asked.map(async (uri) => {
      const item = ITEM.exec(uri);
      return item ? (await ITEMS[item[1]!]!(reader, item[2]!)) !== null : true;
    }),
  );
  return asked.filter((_, i) => seen[i]);
}

/**
 * DevLens's resources: `devlens://repos` (every uploaded graph, as the `repo` tool lists them) and
 * `devlens://graph/{graphId}/meta` (one graph's latest commit with its statistics); and DevStream's
 * items as templates (too many to list; tool results link to them): a task, `devstream://task/{id}`,
 * which a client may subscribe to — `resources/subscribe` in the 2025 era, a `subscriptions/listen`
 * filter in the 2026 one; a plan, `devstream://plan/{id}` (as devstream_list_plans lists it); a
 * memory, `devstream://memory/{id}` (as devstream_get_memory gives it). An unknown id is
 * ResourceNotFoundError (SEP-2164), in both eras; so is one of a project or graph the caller's key
 * is not limited to (they read with the request's caller, `callerOf`; domain/visibility.ts).
 */
export function registerResources(
  server: Server,
  services: Services,
  era: 'legacy' | 'modern',
  callerOf: (ctx: ServerContext) => Caller,
): void {
  /** The request's caller, once it is known to hold the read scope. */
  const reader = (ctx: ServerContext) => {
    const caller = callerOf(ctx);
    requireRead(caller, 'reading resources');
    return { db: services.db, caller };
  };
  if (era === 'legacy') {
    const uris = new Set<string>();
    subscriptions.set(server, uris);
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      const who = reader(ctx);
      // A limited key hears only of items it may read: updates of another project's task would tell it the task exists.
      const item = who.caller.projects === undefined ? null : ITEM.exec(request.params.uri);
      if (item && !(await ITEMS[item[1]!]!(who, item[2]!))) return {};
      // At most a thousand per session: a client cannot grow the server's memory without bound.
      if (uris.size < MAX_SUBSCRIPTIONS) uris.add(request.params.uri);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      uris.delete(request.params.uri);
      return {};
    });
  }
  const json = (uri: string, value: unknown) => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
  });

  server.setRequestHandler('resources/list', async (_request, ctx) => {
    const { graphs } = await listGraphs(reader(ctx));
    return {
      resources: [
        {
          uri: REPOS,
          name: 'repos',
          title: 'Code graphs',
          description: 'Every uploaded code graph with its latest commit',
          mimeType: 'application/json',
        },
        ...graphs.map((g) => ({
          uri: `devlens://graph/${g.graphId}/meta`,
          name: `${g.repo} meta`,
          title: `${g.repo} (${g.graphId})`,
          description: `Latest commit ${g.latestCommit ?? '-'}: ${g.nodes} nodes, ${g.edges} edges`,
          mimeType: 'application/json',
        })),
      ],
    };
  });
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'devstream://task/{id}',
        name: 'task',
        description: 'A task with its status, phase and project (subscribe to hear when it changes)',
        mimeType: 'application/json',
      },
      {
        uriTemplate: 'devstream://plan/{id}',
        name: 'plan',
        description: 'A plan (project) with its phases, their status and task counts',
        mimeType: 'application/json',
      },
      {
        uriTemplate: 'devstream://memory/{id}',
        name: 'memory',
        description: 'A memory with its content, type, keywords and project',
        mimeType: 'application/json',
      },
      {
        uriTemplate: 'devlens://graph/{graphId}/meta',
        name: 'graph meta',
        description: "A graph's latest commit and its statistics",
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const who = reader(ctx);
    const { uri } = request.params;
    if (uri === REPOS) return json(uri, await listGraphs(who));
    const item = ITEM.exec(uri);
    if (item) {
      const found = await ITEMS[item[1]!]!(who, item[2]!);
      if (!found) throw new ResourceNotFoundError(uri);
      return json(uri, found);
    }
    const id = META.exec(uri)?.[1];
    const meta = id ? await graphMeta(who, id) : null;
    if (!meta) throw new ResourceNotFoundError(uri);
    return json(uri, meta);
  });
}
