import { ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import type { Services } from '../domain/context.js';
import { graphMeta, listGraphs } from '../domain/graphs/graphs.js';

const REPOS = 'devlens://repos';
const META = /^devlens:\/\/graph\/([A-Za-z0-9._-]{1,64})\/meta$/;

/**
 * DevLens's resources: `devlens://repos` (every uploaded graph, as the `repo` tool lists them) and
 * `devlens://graph/{graphId}/meta` (one graph's latest commit with its statistics).
 */
export function registerResources(server: Server, services: Services): void {
  const json = (uri: string, value: unknown) => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
  });

  server.setRequestHandler('resources/list', async () => {
    const { graphs } = await listGraphs(services);
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
        uriTemplate: 'devlens://graph/{graphId}/meta',
        name: 'graph meta',
        description: "A graph's latest commit and its statistics",
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    if (uri === REPOS) return json(uri, await listGraphs(services));
    const id = META.exec(uri)?.[1];
    const meta = id ? await graphMeta(services, id) : null;
    if (!meta) throw new ResourceNotFoundError(uri);
    return json(uri, meta);
  });
}
