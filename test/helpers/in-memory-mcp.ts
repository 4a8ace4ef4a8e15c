import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import type { Services } from '../../src/domain/context.js';
import { AccessTracker } from '../../src/domain/memory/access-tracker.js';
import { Embedder } from '../../src/embeddings/embedder.js';
import { noEmbeddings } from '../../src/embeddings/provider.js';
import { VectorIndexes } from '../../src/embeddings/vector-indexes.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { tools } from '../../src/operations/index.js';
import { VERSION } from '../../src/version.js';
import type { TestDb } from './pglite.js';
import { FaultLog } from '../../src/operations/fault-log.js';
import { SearchIndexCache } from '../../src/domain/graphs/search-index.js';

/**
 * The service's MCP server (every tool, as `tools/list` shows them) over the database, connected to
 * a real SDK client by the SDK's linked in-memory transports: no HTTP, no embedder, no background
 * workers. For the fast tier; the HTTP transport's own behaviour is tested over a listening server.
 */
export async function connectInMemory(
  database: TestDb,
  scopes: readonly Scope[] = SCOPES,
): Promise<{ client: Client; close(): Promise<void> }> {
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  const db = database.db.kysely;
  const services: Services = {
    db,
    defaultProject: 'default',
    graphs: { indexes: new SearchIndexCache() },
    jobs: { analyzeRoots: [], queued() {} },
    memory: {
      embedder: new Embedder(noEmbeddings, log),
      indexes: new VectorIndexes(db, log),
      accesses: new AccessTracker(db, log),
      queued() {},
      weights: { vector: 1, keyword: 1, neighbours: 0.4 },
    },
  };
  const server = createMcpServer(
    { services, log, version: VERSION, tools, faults: new FaultLog() },
    { name: null, scopes: new Set(scopes) },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'devstream-hub-unit', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
      await services.memory.accesses.flush();
    },
  };
}
