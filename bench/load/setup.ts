import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { openDb } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { CONTENT_TYPES } from '../../src/db/schema.js';
import { FakeOllama } from '../../support/fake-ollama.js';
import { createCluster, type PgCluster } from '../../support/pg-cluster.js';
import { createScratchDatabase } from '../../support/postgres.js';
import { syntheticGraph } from '../graphs.js';
import { startService, type ServiceProcess } from '../lib/child.js';
import { prng, seed, type SeededData } from '../lib/seed.js';
import type { LoadOptions } from './options.js';
import { Sampler, type RssSample } from './rss.js';
import type { ServiceLog } from './service-log.js';
import { LOAD_PROJECTS, memoryText, pickFrom } from './vocabulary.js';

/** The repository root: the service runs from there. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What the phases run against: the cluster, the seeded database, the service and its sampler. */
export interface LoadRig {
  cluster: PgCluster;
  fake: FakeOllama;
  scratch: { url: string; name: string };
  pgVersion: string;
  seeded: SeededData;
  service: ServiceProcess;
  sampler: Sampler;
  /** RSS right after start-up, before graph and memories. */
  rssBaseline: RssSample;
  graph: { names: string[]; nodes: number; edges: number };
  storedMemories: number;
}

/**
 * A throwaway Postgres cluster (so phase C can stop it) with a scratch database, migrated and seeded
 * with tasks directly (as bench:tasks does: 20 projects × 5 phases × 20 tasks); the service on it with
 * a fake Ollama (dense 768-D vectors: hybrid search); a synthetic code graph uploaded and `memories`
 * stored through REST. Everything started is stopped again if a step fails.
 */
export async function setUpLoad(o: LoadOptions, log: (msg: string) => void, serviceLog: ServiceLog): Promise<LoadRig> {
  log('creating a throwaway Postgres cluster');
  const cluster = await createCluster();
  const fake = await new FakeOllama().start();
  fake.dense = true;
  let service: ServiceProcess | undefined;
  try {
    const scratch = await createScratchDatabase(cluster.url, 'dsh_load');
    const pgVersion = await serverVersion(scratch.url);
    log(`cluster on port ${cluster.port}, database ${scratch.name}; ${pgVersion.split(' on ')[0]}`);

    const db = await openDb({ databaseUrl: scratch.url });
    await migrate(db.kysely);
    const seeded = await seed(db.kysely, { projects: 20, phasesPerProject: 5, tasksPerPhase: 20 });
    await db.close();
    log(`seeded ${seeded.counts.plans} projects, ${seeded.counts.tasks} tasks`);

    service = await startService({
      cwd: ROOT,
      env: {
        DATABASE_URL: scratch.url,
        LOG_LEVEL: 'warn',
        EMBEDDING_PROVIDER: 'ollama',
        OLLAMA_HOST: fake.url,
        OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
        MAX_SESSIONS: '10000',
      },
      onLine: serviceLog.onLine,
    });
    log(`service pid ${service.pid} at ${service.url}`);
    const sampler = new Sampler(service.pid, scratch.url, scratch.name, service.url);
    const rssBaseline = await sampler.sample();

    const graph = await uploadSyntheticGraph(service.url, o.nodeCount);
    log(`uploaded synthetic graph: ${graph.nodes} nodes, ${graph.edges} edges`);
    const storedMemories = await storeMemories(service.url, o.memoryCount);
    log(`stored ${storedMemories} memories through REST`);
    return { cluster, fake, scratch, pgVersion, seeded, service, sampler, rssBaseline, graph, storedMemories };
  } catch (error) {
    await service?.stop();
    await fake.stop();
    await cluster.destroy();
    throw error;
  }
}

/** Stops what setUpLoad started. */
export async function tearDownLoad(rig: LoadRig): Promise<void> {
  rig.sampler.stop();
  await rig.service.stop();
  await rig.fake.stop();
  await rig.cluster.destroy();
}

async function serverVersion(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ v: string }>('select version() as v')).rows[0]!.v;
  } finally {
    await c.end();
  }
}

/** A synthetic code graph for find_symbols / resolve_context; its symbol names for the queries. */
async function uploadSyntheticGraph(url: string, nodeCount: number): Promise<LoadRig['graph']> {
  const graphText = syntheticGraph(nodeCount, 7);
  const graph = JSON.parse(graphText) as { nodes: Array<{ id: string; name: string; type: string }> };
  const names = graph.nodes.filter((n) => n.type !== 'FILE').map((n) => n.name.split('.').pop()!);
  const up = await fetch(`${url}/api/v1/graphs?repo=synthetic`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(graphText),
  });
  const upBody = (await up.json()) as any;
  if (up.status !== 201) throw new Error(`graph upload: ${up.status} ${JSON.stringify(upBody)}`);
  return { names, nodes: upBody.nodes, edges: upBody.edges };
}

/** Memories through the service (embedded by the fake Ollama), 16 at a time. */
async function storeMemories(url: string, count: number): Promise<number> {
  const seedRand = prng(99);
  let stored = 0;
  const storeOne = async (i: number) => {
    const m = memoryText(seedRand, `seed${i}`);
    const res = await fetch(`${url}/api/v1/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        content: m.content,
        content_type: pickFrom(seedRand, CONTENT_TYPES),
        keywords: m.keywords,
        project: pickFrom(seedRand, LOAD_PROJECTS),
      }),
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`seeding memory ${i}: ${res.status}`);
    stored++;
  };
  for (let i = 0; i < count; i += 16)
    await Promise.all(Array.from({ length: Math.min(16, count - i) }, (_, k) => storeOne(i + k)));
  return stored;
}
