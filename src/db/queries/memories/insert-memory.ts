import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { notifyChangeSql } from '../../change-events.js';
import type { Database, SemanticMemoryTable } from '../../schema.js';
import { vectorLiteral } from '../../vector-literal.js';
import { findByHash } from './find-duplicate.js';
import type { MemoryFieldColumn, MemoryRow } from './memory-row.js';

type Db = Kysely<Database> | Transaction<Database>;

export type NewMemory = Pick<SemanticMemoryTable, MemoryFieldColumn | 'content_hash'> & {
  /** Exact project title, case-insensitive; it must exist (see insertMemory). */
  project: string;
  /**
   * The memory's vector: staged in its embedding job (the row gets the model and dimensions now,
   * the worker moves the vector into memory_vectors and its HNSW index; searches see staged vectors).
   */
  embedding: { vector: number[]; model: string; dims: number } | null;
  /** Queue the memory for the embedding worker when it has no vector but should get one. */
  enqueue: boolean;
};

export type InsertOutcome =
  { kind: 'inserted'; memory: MemoryRow } | { kind: 'duplicate'; memory: MemoryRow } | { kind: 'no-project' };

/**
 * The CTEs that insert `m` into the project of the `target` CTE (columns id, title; no row: nothing
 * is written) unless the same content is live there already: `ins` (the new row, or none), its
 * embedding job, and `dup` (the id of that live memory as of the statement's snapshot: none when
 * one was committed since, which the insert still meets). For statements that make the memory
 * together with something else (a task's notes).
 */
export function memoryInsertCtes(m: NewMemory): RawBuilder<unknown> {
  const staged = m.embedding ? sql`${vectorLiteral(m.embedding.vector)}::halfvec` : sql`null::halfvec`;
  return sql`ins as (
      insert into semantic_memory (id, project_id, task_id, content, content_type, content_format, keywords,
                                   importance_score, content_hash, source, embedding_model, embedding_dims,
                                   created_by, project_seq)
      select ${m.id}, target.id, ${m.task_id}, ${m.content}, ${m.content_type}, ${m.content_format},
             ${m.keywords}::text[], ${m.importance_score}, ${m.content_hash}, ${m.source},
             ${m.embedding?.model ?? null}, ${m.embedding?.dims ?? null}, ${m.created_by},
             -- Next in the project's order (migrations/0019): two stores committing together may share it.
             coalesce((select s.project_seq from semantic_memory s
                        where s.project_id = target.id and s.archived_at is null and s.project_seq is not null
                        order by s.project_seq desc limit 1), 0) + 1
        from target
      on conflict (coalesce(project_id, ''), content_hash) where archived_at is null do nothing
      returning *
    ), job as (
      insert into embedding_jobs (memory_id, embedding) select id, ${staged} from ins where ${m.enqueue || m.embedding !== null}
    ), dup as (
      -- The dedup index's own expression: its index answers.
      select d.id from semantic_memory d join target on coalesce(d.project_id, '') = target.id
       where d.content_hash = ${m.content_hash} and d.archived_at is null
    )`;
}

/** Tells every instance of the memory `ins` inserted (none: nothing), at commit; see notifyChangeSql. */
export const memoryInsertedNotifySql = sql`case when ins.id is not null then ${notifyChangeSql('memory-changed', sql`target.title`, sql`ins.id`)} end`;

/**
 * Stores a memory in one statement: into the project titled `project` (case-insensitive), with its
 * vector staged or queued for embedding when asked, unless the same content is already stored in
 * that project, in which case the existing memory comes back as a duplicate. Writes nothing when
 * the project does not exist. A new memory is announced to every instance (memory-changed) at commit.
 */
export async function insertMemory(db: Db, m: NewMemory): Promise<InsertOutcome> {
  const insert = sql<{ project_id: string | null } & Partial<MemoryRow>>`
    with target as (
      select id, title from intervention_plans where lower(title) = lower(${m.project})
    ), ${memoryInsertCtes(m)}
    select target.id as project_id, target.title as project, ins.id, ins.task_id, ins.content, ins.content_type,
           ins.content_format, ins.keywords, ins.importance_score, ins.source, ins.embedding_model, ins.embedding_dims,
           0 as access_count, null::timestamptz as last_accessed_at, ins.created_by, ins.created_at,
           ${memoryInsertedNotifySql} as notified
      from (select 1) as one
      left join target on true
      left join ins on true`;
  const [outcome] = (await insert.execute(db)).rows;
  if (!outcome?.project_id) return { kind: 'no-project' };
  if (outcome.id) {
    const { project_id: _, notified: __, ...memory } = outcome as typeof outcome & { notified?: unknown };
    return { kind: 'inserted', memory: memory as MemoryRow };
  }
  return duplicateOf(db, outcome.project_id, m.content_hash);
}

/** The live memory an insert met instead of inserting (same content in the project with this id). */
async function duplicateOf(db: Db, projectId: string, contentHash: string): Promise<InsertOutcome> {
  const existing = await findByHash(db, projectId, contentHash);
  if (!existing) throw new Error('a duplicate memory was reported but none was found');
  return { kind: 'duplicate', memory: existing };
}
