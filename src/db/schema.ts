import type { ColumnType, Generated } from 'kysely';

/** A timestamptz column: read as Date, written as Date or ISO string, defaulted by the database. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string | undefined, string>;

export const PLAN_STATUSES = ['draft', 'active', 'completed', 'paused', 'archived', 'cancelled'] as const;
export const PHASE_STATUSES = ['pending', 'active', 'completed', 'blocked', 'skipped'] as const;
export const TASK_STATUSES = ['pending', 'active', 'completed', 'failed', 'skipped'] as const;
export const TASK_TYPES = ['analysis', 'coding', 'documentation', 'testing', 'review', 'research'] as const;

export const CONTENT_TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
export const CONTENT_FORMATS = ['text', 'json', 'code', 'markdown'] as const;

export type PlanStatus = (typeof PLAN_STATUSES)[number];
export type PhaseStatus = (typeof PHASE_STATUSES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];
export type TaskType = (typeof TASK_TYPES)[number];
export type ContentType = (typeof CONTENT_TYPES)[number];
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

/** Projects: DevStream's `intervention_plans`. */
export interface InterventionPlansTable {
  id: string;
  title: string;
  description: string | null;
  objectives: Json<string[]>;
  technical_specs: Json<Record<string, unknown> | null> | null;
  expected_outcome: string;
  status: PlanStatus;
  priority: number;
  estimated_hours: number | null;
  actual_hours: number | null;
  tags: Json<string[] | null> | null;
  metadata: Json<Record<string, unknown> | null> | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: NullableTimestamp;
}

export interface PhasesTable {
  id: string;
  plan_id: string;
  name: string;
  description: string | null;
  sequence_order: number;
  is_parallel: boolean | null;
  dependencies: Json<string[] | null> | null;
  status: PhaseStatus;
  estimated_minutes: number | null;
  actual_minutes: number | null;
  blocking_reason: string | null;
  completion_criteria: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
}

export interface MicroTasksTable {
  id: string;
  phase_id: string;
  title: string;
  description: string;
  max_duration_minutes: number | null;
  max_context_tokens: number | null;
  assigned_agent: string | null;
  task_type: TaskType;
  status: TaskStatus;
  priority: number;
  input_files: Json<string[] | null> | null;
  output_files: Json<string[] | null> | null;
  generated_code: string | null;
  documentation: string | null;
  error_log: string | null;
  actual_duration_minutes: number | null;
  context_tokens_used: number | null;
  retry_count: number | null;
  parent_task_id: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  last_retry_at: NullableTimestamp;
}

/** Every status change of a task, with the caller's notes: nothing an agent reports is dropped. */
export interface TaskStatusHistoryTable {
  id: Generated<string>;
  task_id: string;
  from_status: TaskStatus;
  to_status: TaskStatus;
  notes: string | null;
  created_by: string | null;
  created_at: Timestamp;
}

export interface SemanticMemoryTable {
  id: string;
  project_id: string | null;
  task_id: string | null;
  content: string;
  content_type: ContentType;
  content_format: ContentFormat;
  keywords: string[];
  importance_score: number;
  content_hash: string;
  source: string;
  /** The model and dimensions of the memory's vector, staged (embedding_jobs) or stored (memory_vectors). */
  embedding_model: string | null;
  embedding_dims: number | null;
  fts: ColumnType<string, never, never>;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: NullableTimestamp;
  /** Its place in its project's order of storing (written by memoryInsertCtes, migrations/0019). */
  project_seq: ColumnType<number | null, never, never>;
}

/** How often search returned a memory, and when last (beside the memory's row: see migration 0004). */
export interface MemoryAccessTable {
  memory_id: string;
  access_count: Generated<number>;
  last_accessed_at: NullableTimestamp;
}

export interface EmbeddingJobsTable {
  memory_id: string;
  attempts: Generated<number>;
  run_after: Timestamp;
  leased_until: NullableTimestamp;
  last_error: string | null;
  created_at: Timestamp;
  /** A vector the embedder already returned, waiting to be moved into memory_vectors (migration 0007). */
  embedding: string | null;
}

/**
 * A live memory's vector, with the memory's columns a vector search filters on (migration 0021): the
 * embedding worker inserts it; deleting the memory removes it.
 */
export interface MemoryVectorsTable {
  memory_id: string;
  project_id: string | null;
  content_type: ContentType;
  created_at: Timestamp;
  embedding_model: string;
  embedding_dims: number;
  /** pgvector text form `[0.1,0.2,…]`; written as that string. */
  embedding: string;
}

/** How many live memories of a project hold each lexeme (kept by a trigger; BM25's document frequency). */
export interface MemoryLexemeDfTable {
  project_key: string;
  lexeme: string;
  df: number;
}

/** Signed changes to memory_lexeme_df not folded in yet (appended by a trigger). */
export interface MemoryLexemeDeltaTable {
  project_key: string;
  lexeme: string;
  delta: number;
}

export interface SchemaVersionTable {
  version: number;
  name: string;
  checksum: string;
  applied_at: Timestamp;
}

/** A repository whose code graphs are uploaded (migrations/0006). */
export interface CodeGraphsTable {
  graph_id: string;
  repo: string;
  repo_url: string | null;
  default_branch: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface GraphCommitsTable {
  graph_id: string;
  commit_hash: string;
  branch: string | null;
  analyzed_at: Timestamp;
  uploaded_at: Timestamp;
  node_count: Generated<number>;
  edge_count: Generated<number>;
  stats: Json<unknown> | null;
  extra: Json<Record<string, unknown> | null> | null;
  created_by: string | null;
}

export interface GraphNodesTable {
  graph_id: string;
  commit_hash: string;
  seq: number;
  node_id: string;
  name: string;
  type: string;
  file_path: string;
  start_line: number;
  end_line: number;
  technical_summary: string | null;
  business_summary: string | null;
  security_severity: string | null;
  security_summary: string | null;
  code: string | null;
  score: number | null;
  metadata: Json<Record<string, unknown> | null> | null;
  extra: Json<Record<string, unknown> | null> | null;
  search: string;
  /** What the node's vector is made from (migrations/0011); null: no vector (GHOST nodes, older uploads). */
  embed_doc: string | null;
}

/** A node's vector of one model, in half precision (migrations/0011). */
export interface GraphNodeVectorsTable {
  graph_id: string;
  commit_hash: string;
  seq: number;
  embedding: string;
  embedding_model: string;
  embedding_dims: number;
}

/** A node waiting for a vector (migrations/0011), as embedding_jobs for memories. */
export interface GraphNodeEmbeddingJobsTable {
  graph_id: string;
  commit_hash: string;
  seq: number;
  attempts: Generated<number>;
  run_after: Timestamp;
  leased_until: NullableTimestamp;
  last_error: string | null;
  /** False: embed anew, not from an earlier commit's vector (`reembed --all`). */
  reuse: Generated<boolean>;
  created_at: Timestamp;
}

export interface GraphEdgesTable {
  graph_id: string;
  commit_hash: string;
  seq: number;
  from_id: string;
  to_id: string;
  type: string;
  metadata: Json<Record<string, unknown> | null> | null;
}

export type JobKind = 'analyze';
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** A background job (migration 0008): claimed with a lease, renewed while it runs. */
export interface JobsTable {
  id: string;
  kind: JobKind;
  status: Generated<JobStatus>;
  params: Json<Record<string, unknown>>;
  progress: Json<Record<string, unknown> | null> | null;
  result: Json<Record<string, unknown> | null> | null;
  error: string | null;
  attempts: Generated<number>;
  leased_until: NullableTimestamp;
  created_by: string | null;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

/** API keys: a SHA-256 hash of each token, never the token (migrations/0010). */
export interface ApiKeysTable {
  id: string;
  name: string;
  token_hash: string;
  scopes: string[];
  created_by: string | null;
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  /** The default MCP tool profile; null: none set (all). */
  tool_profile: 'all' | 'core' | null;
  /** The projects (titles) the key may see; null: every project (migrations/0014). */
  projects: string[] | null;
  /** The code graphs (repo names) the key may see; null: every graph. */
  repos: string[] | null;
}

/** What a Claude Code hook session was already given (migrations/0013). */
export interface HookInjectionsTable {
  caller: string;
  session_id: string;
  item: string;
  expires_at: Timestamp;
}

/** What a Claude Code hook session touched, for its capture (migrations/0013). */
export interface HookSessionsTable {
  caller: string;
  session_id: string;
  project: string | null;
  files_read: Generated<string[]>;
  files_edited: Generated<string[]>;
  tasks: Generated<string[]>;
  started_at: Generated<Date>;
  expires_at: Timestamp;
}

export interface Database {
  api_keys: ApiKeysTable;
  hook_injections: HookInjectionsTable;
  hook_sessions: HookSessionsTable;
  jobs: JobsTable;
  code_graphs: CodeGraphsTable;
  graph_commits: GraphCommitsTable;
  graph_nodes: GraphNodesTable;
  graph_edges: GraphEdgesTable;
  graph_node_vectors: GraphNodeVectorsTable;
  graph_node_embedding_jobs: GraphNodeEmbeddingJobsTable;
  intervention_plans: InterventionPlansTable;
  phases: PhasesTable;
  micro_tasks: MicroTasksTable;
  task_status_history: TaskStatusHistoryTable;
  semantic_memory: SemanticMemoryTable;
  memory_access: MemoryAccessTable;
  embedding_jobs: EmbeddingJobsTable;
  memory_vectors: MemoryVectorsTable;
  memory_lexeme_df: MemoryLexemeDfTable;
  memory_lexeme_delta: MemoryLexemeDeltaTable;
  schema_version: SchemaVersionTable;
}
