import { sql, type Selectable } from 'kysely';
import type { MemoryAccessTable, SemanticMemoryTable } from '../../schema.js';

/** A memory's own fields, as its writer gives them and as they are read back. */
export type MemoryFieldColumn =
  | 'id'
  | 'task_id'
  | 'content'
  | 'content_type'
  | 'content_format'
  | 'keywords'
  | 'importance_score'
  | 'source'
  | 'created_by';

/** The columns a memory is read back with (not the vector, not the tsvector). */
type MemoryColumn = MemoryFieldColumn | 'embedding_model' | 'embedding_dims' | 'created_at';

/** A memory as read back: those columns, its project's title and its access counts. */
export type MemoryRow = Pick<Selectable<SemanticMemoryTable>, MemoryColumn> &
  Pick<Selectable<MemoryAccessTable>, 'access_count' | 'last_accessed_at'> & { project: string | null };

/** Selects a MemoryRow from `m` (semantic_memory), `p` (its plan) and `a` (see accessJoin). */
export const memoryColumns = sql`m.id, p.title as project, m.task_id, m.content, m.content_type, m.content_format, m.keywords,
  m.importance_score, m.source, m.embedding_model, m.embedding_dims, coalesce(a.access_count, 0) as access_count,
  a.last_accessed_at, m.created_by, m.created_at`;
/** Joins a memory's access counts as `a` (memory_access rows exist only for memories read back). */
export const accessJoin = sql`left join memory_access a on a.memory_id = m.id`;
