import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { vectorLiteral } from '../../vector-literal.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A node whose embedding document the worker embeds (graph_node_embedding_jobs, migrations/0011). */
export interface ClaimedNodeJob {
  graph_id: string;
  commit_hash: string;
  seq: number;
  /** The node's embed_doc when it was claimed: the vector is stored only if the node still reads so. */
  doc: string;
  attempts: number;
  /** May take an earlier commit's vector of the same node and document (see reuseNodeVectors). */
  reuse: boolean;
}

/** The latest commit of each graph (as graph_commits_latest orders them). */
const LATEST_COMMITS = sql`(select distinct on (graph_id) graph_id, commit_hash from graph_commits
                             order by graph_id, analyzed_at desc, uploaded_at desc)`;

/**
 * Queues the nodes of one commit that have an embedding document (after its upload committed; a
 * re-upload replaced the commit's rows, its old jobs and vectors with them). Returns how many.
 */
export async function queueCommitNodes(db: Db, g: { graphId: string; commitHash: string }): Promise<number> {
  const result = await sql`
    insert into graph_node_embedding_jobs (graph_id, commit_hash, seq)
    select graph_id, commit_hash, seq from graph_nodes
     where graph_id = ${g.graphId} and commit_hash = ${g.commitHash} and embed_doc is not null
    on conflict (graph_id, commit_hash, seq) do update set run_after = now(), leased_until = null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Queues the nodes of each graph's latest commit that have no vector of `model` (a model change, or
 * embeddings turned on after the upload); with `all`, every such node, to be embedded anew (not
 * from an earlier commit's vector). Older commits keep what they have. Returns how many were queued.
 */
export async function queueStaleNodes(db: Db, model: string, options: { all?: boolean } = {}): Promise<number> {
  const result = await sql`
    insert into graph_node_embedding_jobs (graph_id, commit_hash, seq, reuse)
    select n.graph_id, n.commit_hash, n.seq, ${options.all !== true}
      from ${LATEST_COMMITS} l
      join graph_nodes n on n.graph_id = l.graph_id and n.commit_hash = l.commit_hash
     where n.embed_doc is not null
       and (${options.all === true} or not exists (
             select 1 from graph_node_vectors v
              where v.graph_id = n.graph_id and v.commit_hash = n.commit_hash and v.seq = n.seq
                and v.embedding_model = ${model}))
    on conflict (graph_id, commit_hash, seq) do update
       set run_after = now(), leased_until = null, reuse = graph_node_embedding_jobs.reuse and excluded.reuse`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Claims up to `batch` due node jobs for `leaseMs`, as claimJobs does for memories (FOR UPDATE SKIP
 * LOCKED, a lease instead of a lock), oldest first, with each node's embedding document.
 */
export async function claimNodeJobs(db: Db, batch: number, leaseMs: number): Promise<ClaimedNodeJob[]> {
  const result = await sql<ClaimedNodeJob>`
    with due as (
      select graph_id, commit_hash, seq from graph_node_embedding_jobs
       where run_after <= now() and (leased_until is null or leased_until < now())
       order by run_after
       limit ${batch}
       for update skip locked
    ), leased as (
      update graph_node_embedding_jobs j
         set leased_until = now() + ${leaseMs} * interval '1 millisecond', attempts = j.attempts + 1
        from due
       where j.graph_id = due.graph_id and j.commit_hash = due.commit_hash and j.seq = due.seq
      returning j.graph_id, j.commit_hash, j.seq, j.attempts, j.reuse
    )
    select l.graph_id, l.commit_hash, l.seq, n.embed_doc as doc, l.attempts, l.reuse
      from leased l
      join graph_nodes n on n.graph_id = l.graph_id and n.commit_hash = l.commit_hash and n.seq = l.seq
     where n.embed_doc is not null`.execute(db);
  return result.rows;
}

/**
 * Stores the vectors of finished node jobs and removes their jobs, in one statement. A node whose
 * commit was uploaded again since the claim with another document keeps its new job and gets no
 * stale vector; a commit dropped meanwhile (retention) took its jobs with it. Returns how many
 * vectors were stored.
 */
export async function completeNodeJobs(
  db: Db,
  done: Array<{ graph_id: string; commit_hash: string; seq: number; doc: string; vector: number[] }>,
  model: string,
): Promise<number> {
  if (done.length === 0) return 0;
  const dims = done[0]!.vector.length;
  try {
    const result = await sql<{ seq: number }>`
      with input as (
        select i.* from unnest(${done.map((d) => d.graph_id)}::text[], ${done.map((d) => d.commit_hash)}::text[],
                               ${done.map((d) => d.seq)}::int[], ${done.map((d) => d.doc)}::text[],
                               ${done.map((d) => vectorLiteral(d.vector))}::text[]) as i(graph_id, commit_hash, seq, doc, vec)
          join graph_nodes n on n.graph_id = i.graph_id and n.commit_hash = i.commit_hash and n.seq = i.seq
                            and n.embed_doc = i.doc
      ), ins as (
        insert into graph_node_vectors (graph_id, commit_hash, seq, embedding, embedding_model, embedding_dims)
        select graph_id, commit_hash, seq, vec::halfvec, ${model}, ${dims} from input
        on conflict (graph_id, commit_hash, seq) do update
           set embedding = excluded.embedding, embedding_model = excluded.embedding_model,
               embedding_dims = excluded.embedding_dims
        returning seq
      ), del as (
        delete from graph_node_embedding_jobs j using input i
         where j.graph_id = i.graph_id and j.commit_hash = i.commit_hash and j.seq = i.seq
      )
      select seq from ins`.execute(db);
    return result.rows.length;
  } catch (error) {
    // The commit was dropped between the read and the insert's key check: its nodes are gone.
    if ((error as { code?: unknown } | undefined)?.code === '23503') return 0;
    throw error;
  }
}

/**
 * Gives claimed nodes the vector of `model` that the same node (same id, same embedding document)
 * already has in another commit of the graph, the newest such, and removes their jobs: a push
 * changes few nodes, so most of a new commit's nodes need no embedder call (and none while it is
 * down). Returns the seqs given a vector, per graph and commit (`graph_id commit_hash seq` keys).
 */
export async function reuseNodeVectors(db: Db, jobs: ClaimedNodeJob[], model: string): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const result = await sql<{ graph_id: string; commit_hash: string; seq: number }>`
    with input as (
      select * from unnest(${jobs.map((j) => j.graph_id)}::text[], ${jobs.map((j) => j.commit_hash)}::text[],
                           ${jobs.map((j) => j.seq)}::int[], ${jobs.map((j) => j.doc)}::text[])
                    as i(graph_id, commit_hash, seq, doc)
    ), found as (
      select distinct on (i.graph_id, i.commit_hash, i.seq) i.graph_id, i.commit_hash, i.seq, v.embedding, v.embedding_dims
        from input i
        join graph_nodes n on n.graph_id = i.graph_id and n.commit_hash = i.commit_hash and n.seq = i.seq
                          and n.embed_doc = i.doc
        join graph_commits c on c.graph_id = i.graph_id and c.commit_hash <> i.commit_hash
        join graph_nodes o on o.graph_id = c.graph_id and o.commit_hash = c.commit_hash and o.node_id = n.node_id
                          and o.embed_doc = i.doc
        join graph_node_vectors v on v.graph_id = o.graph_id and v.commit_hash = o.commit_hash and v.seq = o.seq
                                 and v.embedding_model = ${model}
       order by i.graph_id, i.commit_hash, i.seq, c.analyzed_at desc, c.uploaded_at desc
    ), ins as (
      insert into graph_node_vectors (graph_id, commit_hash, seq, embedding, embedding_model, embedding_dims)
      select graph_id, commit_hash, seq, embedding, ${model}, embedding_dims from found
      on conflict (graph_id, commit_hash, seq) do update
         set embedding = excluded.embedding, embedding_model = excluded.embedding_model,
             embedding_dims = excluded.embedding_dims
      returning graph_id, commit_hash, seq
    ), del as (
      delete from graph_node_embedding_jobs j using found f
       where j.graph_id = f.graph_id and j.commit_hash = f.commit_hash and j.seq = f.seq
    )
    select graph_id, commit_hash, seq from ins`.execute(db);
  return new Set(result.rows.map((r) => nodeJobKey(r)));
}

/** A claimed node's key in reuseNodeVectors' answer. */
export const nodeJobKey = (j: { graph_id: string; commit_hash: string; seq: number }): string =>
  `${j.graph_id} ${j.commit_hash} ${j.seq}`;

/** Puts claimed node jobs back, due again after `delayMs`, with the reason they failed. */
export async function retryNodeJobs(
  db: Db,
  jobs: Array<{ graph_id: string; commit_hash: string; seq: number }>,
  delayMs: number,
  error: string,
): Promise<void> {
  if (jobs.length === 0) return;
  await sql`
    update graph_node_embedding_jobs j
       set leased_until = null, run_after = now() + ${delayMs} * interval '1 millisecond',
           last_error = ${error.slice(0, 1000)}
      from unnest(${jobs.map((j) => j.graph_id)}::text[], ${jobs.map((j) => j.commit_hash)}::text[],
                  ${jobs.map((j) => j.seq)}::int[]) as i(graph_id, commit_hash, seq)
     where j.graph_id = i.graph_id and j.commit_hash = i.commit_hash and j.seq = i.seq`.execute(db);
}

/** Makes every waiting node job due now (the embedder answers again). */
export async function makeNodeJobsDue(db: Db): Promise<void> {
  await sql`update graph_node_embedding_jobs set run_after = now()
             where run_after > now() and leased_until is null`.execute(db);
}

/** Nodes of the graphs' latest commits still waiting for a vector (the pending gauge). */
export async function pendingLatestNodes(db: Db): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from graph_node_embedding_jobs j
      join ${LATEST_COMMITS} l on l.graph_id = j.graph_id and l.commit_hash = j.commit_hash`.execute(db);
  return result.rows[0]?.n ?? 0;
}

/**
 * Whether any node of the commit has a vector of `model`, and whether any is still waiting for
 * one: a question need not be embedded when there is nothing to compare it with.
 */
export async function commitVectorState(
  db: Db,
  g: { graphId: string; commitHash: string },
  model: string,
): Promise<{ vectors: boolean; pending: boolean }> {
  const result = await sql<{ vectors: boolean; pending: boolean }>`
    select exists (select 1 from graph_node_vectors
                    where graph_id = ${g.graphId} and commit_hash = ${g.commitHash} and embedding_model = ${model}) as vectors,
           exists (select 1 from graph_node_embedding_jobs
                    where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}) as pending`.execute(db);
  const row = result.rows[0];
  return { vectors: row?.vectors === true, pending: row?.pending === true };
}
