import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, GraphNodesTable } from '../../schema.js';

type Db = Kysely<Database>;

/** A node as code search indexes it: what a hit shows, and its search document as text. */
export type SearchRow = Pick<
  Selectable<GraphNodesTable>,
  'seq' | 'node_id' | 'name' | 'type' | 'file_path' | 'start_line' | 'end_line' | 'score'
> & {
  /** The tsvector's text form: `'lexeme':1A,4B 'other':2` (no letter: weight D); '' for a GHOST. */
  search: string;
  /** The node has a technical or business summary. */
  summarized: boolean;
  /** The node has a security note (a summary or a severity). */
  secure: boolean;
};

/** Rows read per round trip while an index is built (bounds the memory of one page). */
const PAGE = 2000;

/**
 * The nodes of one commit with their search documents (GHOSTs with none: they are not searched, but
 * a packet's walk reaches them), page by page in upload order: code search builds its in-process
 * index from them (domain/graphs/search-index.ts).
 */
export async function* searchRows(db: Db, g: { graphId: string; commitHash: string }): AsyncGenerator<SearchRow[]> {
  let after = -1;
  for (;;) {
    const page = await sql<SearchRow>`
      select n.seq, n.node_id, n.name, n.type, n.file_path, n.start_line, n.end_line, n.score,
             case when n.type = 'GHOST' then '' else n.search::text end as search,
             (nullif(n.business_summary, '') is not null or nullif(n.technical_summary, '') is not null) as summarized,
             (nullif(n.security_summary, '') is not null or nullif(n.security_severity, '') is not null) as secure
        from graph_nodes n
       where n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.seq > ${after}
       order by n.seq
       limit ${PAGE}`.execute(db);
    if (page.rows.length === 0) return;
    yield page.rows.map((r) => ({ ...r, score: r.score === null ? null : Number(r.score) }));
    after = page.rows[page.rows.length - 1]!.seq;
    if (page.rows.length < PAGE) return;
  }
}

/** The english stems of words, as the search documents' prose and name parts hold them (null: english drops the word). */
export async function englishStems(db: Db, words: string[]): Promise<Map<string, string | null>> {
  if (words.length === 0) return new Map();
  const rows = await sql<{ word: string; stem: string | null }>`
    select w.word, (select lexeme from unnest(to_tsvector('english', w.word)) limit 1) as stem
      from unnest(${words}::text[]) as w(word)`.execute(db);
  return new Map(rows.rows.map((r) => [r.word, r.stem]));
}

/** An edge of a commit: its ends (node ids, which a GHOST or no node may hold) and its type. */
export interface EdgeRow {
  from_id: string;
  to_id: string;
  type: string;
}

/** The edges of one commit, page by page in upload order: code search's graph (calls, and the walks of a packet). */
export async function* commitEdges(db: Db, g: { graphId: string; commitHash: string }): AsyncGenerator<EdgeRow[]> {
  let after = -1;
  for (;;) {
    const page = await sql<EdgeRow & { seq: number }>`
      select e.seq, e.from_id, e.to_id, e.type from graph_edges e
       where e.graph_id = ${g.graphId} and e.commit_hash = ${g.commitHash} and e.seq > ${after}
       order by e.seq
       limit ${PAGE * 5}`.execute(db);
    if (page.rows.length === 0) return;
    yield page.rows;
    after = page.rows[page.rows.length - 1]!.seq;
    if (page.rows.length < PAGE * 5) return;
  }
}
