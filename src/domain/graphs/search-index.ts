import type { Kysely } from 'kysely';
import { commitEdges, searchRows, type SearchRow } from '../../db/queries/graphs/search-rows.js';
import type { Database } from '../../db/schema.js';
import { fileKind, type FileKind } from '../../file-kind.js';
import { identifierWords } from './search-document.js';

/**
 * Code search's index of one commit, in process (issue 21): each node's search document (the
 * tsvector the upload stored: name A, path and signature B, prose C, identifiers D) as fields,
 * an inverted list per term, the document frequencies and mean field lengths BM25F needs, and the
 * names an exact-name lookup reads; and the commit's edges, which a packet walks from its seeds.
 * Built once per commit upload from the database, then every search scores every node that holds a
 * word of the query — nothing is cut before it is ranked, and nothing depends on the order the rows
 * were stored in.
 */

/** Field bits of a term in a node: name, path/signature, prose, identifiers (weights A–D). */
export const FIELD_BITS = { A: 1, B: 2, C: 4, D: 8 } as const;

/** The end of a constructor's node id (`src/a.ts::C.constructor`). */
const CONSTRUCTOR = '.constructor';

/** Characters of search documents read between two turns of the event loop while an index is built. */
const YIELD_CHARS = 1 << 20;

/**
 * Terms of one node indexed at most in full, and postings of one commit: an analyzed node holds a
 * few hundred terms (identifiers are cut at 4,000 characters), a hostile upload millions.
 */
const MAX_NODE_TERMS = 5_000;
const MAX_POSTINGS = 10_000_000;

/** A node as code search ranks it. */
export type IndexedNode = Omit<SearchRow, 'search' | 'summarized'> & {
  /** Distinct terms per field (A–D). */
  lengths: [number, number, number, number];
  /** Words of the name after its container (`Ky.retryFromError` → 3). */
  nameParts: number;
  /** That name in lower case without punctuation (`retryfromerror`): what a query's words may spell. */
  nameKey: string;
  /** Where it lives (file-kind.ts): test, generated, auxiliary or source code. */
  kind: FileKind;
};

/** One term's postings: node positions in `nodes`, and the fields it fills in each. */
export interface Postings {
  nodes: Int32Array;
  masks: Uint8Array;
}

/**
 * Calls `visit` with each lexeme of a tsvector's text form and the fields (FIELD_BITS) its
 * positions carry (a position without a letter is weight D). Linear in the text.
 */
export function readTsvector(text: string, visit: (lexeme: string, mask: number) => void): void {
  const length = text.length;
  let at = 0;
  while (at < length) {
    while (at < length && text.charCodeAt(at) === 0x20) at++;
    if (at >= length || text[at] !== "'") return;
    at++;
    let lexeme = '';
    let from = at;
    for (;;) {
      if (at >= length) return;
      const c = text[at];
      if (c === "'") {
        if (text[at + 1] === "'") {
          lexeme += `${text.slice(from, at)}'`;
          at += 2;
          from = at;
          continue;
        }
        lexeme += text.slice(from, at);
        at++;
        break;
      }
      if (c === '\\') {
        lexeme += text.slice(from, at) + (text[at + 1] ?? '');
        at += 2;
        from = at;
        continue;
      }
      at++;
    }
    let mask = 0;
    if (text[at] === ':') {
      // Positions: `1A,5B,7` — a letter after each number, none meaning weight D.
      at++;
      while (at < length && text.charCodeAt(at) !== 0x20) {
        while (at < length && text.charCodeAt(at) >= 0x30 && text.charCodeAt(at) <= 0x39) at++;
        const c = text.charCodeAt(at);
        if (c >= 0x41 && c <= 0x44) {
          mask |= 1 << (c - 0x41);
          at++;
        } else {
          mask |= FIELD_BITS.D;
        }
        if (at < length && text.charCodeAt(at) !== 0x20) at++; // the comma (or anything else: skipped)
      }
    } else {
      mask = FIELD_BITS.D;
    }
    visit(lexeme, mask);
  }
}

export class SearchIndex {
  readonly nodes: IndexedNode[] = [];
  /** Whether any node of the commit has a summary (the packet's WHAT says which case it is). */
  hasSummaries = false;
  /** Mean distinct terms per field over the commit's nodes. */
  readonly avg: [number, number, number, number] = [1, 1, 1, 1];
  private readonly postings = new Map<string, Postings>();
  private readonly byName = new Map<string, number[]>();
  private readonly bySegment = new Map<string, number[]>();
  private readonly byId = new Map<string, number[]>();
  /** Per node, the nodes it calls and the nodes that call it (first copies; no GHOSTs). */
  readonly calls: number[][] = [];
  readonly callers: number[][] = [];
  /** Per node, its callers and callees together, each once. */
  readonly near: number[][] = [];
  /** Per node, 1 when another node has its id (set once the nodes are read). */
  private twins = new Uint8Array(0);
  /** GHOST nodes (first copy by id): not searched, but a walk reaches them. */
  private readonly ghosts = new Map<string, IndexedNode>();
  /** Every id an edge names, numbered; the edges out of and into each, with their types. */
  private readonly vertex = new Map<string, number>();
  private readonly vertexIds: string[] = [];
  private readonly out: Array<Array<{ to: number; type: string }>> = [];
  private readonly in: Array<Array<{ to: number; type: string }>> = [];

  /** Builds the index from the commit's rows (page by page, so a page's text is the most held at once). */
  static async build(db: Kysely<Database>, g: { graphId: string; commitHash: string }): Promise<SearchIndex> {
    const index = new SearchIndex();
    const lists = new Map<string, number[]>();
    const sums = [0, 0, 0, 0];
    let sinceYield = 0;
    let postings = 0;
    for await (const page of searchRows(db, g)) {
      for (const row of page) {
        // Let other requests run every YIELD_CHARS of documents read (a commit's documents may hold megabytes each).
        sinceYield += row.search.length + 200;
        if (sinceYield > YIELD_CHARS) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (row.type === 'GHOST') {
          if (!index.ghosts.has(row.node_id)) index.ghosts.set(row.node_id, index.indexed(row, [0, 0, 0, 0]));
          continue;
        }
        const at = index.nodes.length;
        const lengths: [number, number, number, number] = [0, 0, 0, 0];
        let terms = 0;
        readTsvector(row.search, (lexeme, mask) => {
          for (let f = 0; f < 4; f++) if (mask & (1 << f)) lengths[f] = lengths[f]! + 1;
          // Bounds for hostile documents: past them, a node is found by its name and path only.
          if (++terms > MAX_NODE_TERMS || postings > MAX_POSTINGS) {
            if (!(mask & (FIELD_BITS.A | FIELD_BITS.B))) return;
            mask &= FIELD_BITS.A | FIELD_BITS.B;
          }
          postings++;
          let list = lists.get(lexeme);
          if (!list) lists.set(lexeme, (list = []));
          list.push(at * 16 + mask);
        });
        if (row.summarized) index.hasSummaries = true;
        index.nodes.push(index.indexed(row, lengths));
        for (let f = 0; f < 4; f++) sums[f]! += lengths[f]!;
        index.add(index.byName, row.name.toLowerCase(), at);
        index.add(index.bySegment, lastSegment(row.name).toLowerCase(), at);
        index.add(index.byId, row.node_id, at);
      }
    }
    for (const [lexeme, list] of lists) {
      const nodes = new Int32Array(list.length);
      const masks = new Uint8Array(list.length);
      list.forEach((v, i) => {
        nodes[i] = Math.floor(v / 16);
        masks[i] = v % 16;
      });
      index.postings.set(lexeme, { nodes, masks });
    }
    index.twins = new Uint8Array(index.nodes.length);
    for (const copies of index.byId.values()) if (copies.length > 1) for (const at of copies) index.twins[at] = 1;
    for (let i = 0; i < index.nodes.length; i++) {
      index.calls.push([]);
      index.callers.push([]);
    }
    /** Per caller, the constructors it calls and their classes' ids. */
    const constructorCalls = new Map<number, Array<[number, string]>>();
    const edgeTypes = new Map<string, string>();
    for await (const page of commitEdges(db, g)) {
      for (const e of page) {
        const a = index.vertexOf(e.from_id);
        const b = index.vertexOf(e.to_id);
        // One string per edge type, not one per edge row.
        let type = edgeTypes.get(e.type);
        if (type === undefined) edgeTypes.set(e.type, (type = e.type));
        index.out[a]!.push({ to: b, type });
        index.in[b]!.push({ to: a, type });
        if (e.type !== 'CALLS') continue;
        const from = index.byId.get(e.from_id)?.[0];
        const to = index.byId.get(e.to_id)?.[0];
        if (from === undefined || to === undefined || from === to) continue;
        if (e.to_id.endsWith(CONSTRUCTOR)) {
          const list = constructorCalls.get(from);
          const call: [number, string] = [to, e.to_id.slice(0, -CONSTRUCTOR.length)];
          if (list) list.push(call);
          else constructorCalls.set(from, [call]);
          continue;
        }
        index.calls[from]!.push(to);
        index.callers[to]!.push(from);
      }
    }
    // `new C()` calls the class and its constructor (the analyzer writes both): one instantiation,
    // counted once among a node's neighbours — to the class. A constructor called alone stays.
    // A set of each such caller's callees, made once: linear in the edges, however many a node has.
    for (const [from, calls] of constructorCalls) {
      const called = new Set(index.calls[from]);
      for (const [to, classId] of calls) {
        const cls = index.byId.get(classId)?.[0];
        if (cls !== undefined && called.has(cls)) continue;
        index.calls[from]!.push(to);
        index.callers[to]!.push(from);
      }
    }
    for (let i = 0; i < index.nodes.length; i++)
      index.near.push([...new Set([...index.calls[i]!, ...index.callers[i]!])]);
    const n = Math.max(index.nodes.length, 1);
    for (let f = 0; f < 4; f++) index.avg[f] = Math.max(sums[f]! / n, 1);
    return index;
  }

  /** A row as the index keeps it (its search document read into `lengths`). */
  private indexed(row: SearchRow, lengths: [number, number, number, number]): IndexedNode {
    const nameParts = Math.max(identifierWords(lastSegment(row.name)).split(' ').filter(Boolean).length, 1);
    const nameKey = lastSegment(row.name)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '');
    // An object literal of one shape (not a spread of the driver's row): searches read every candidate's fields.
    return {
      seq: row.seq,
      node_id: row.node_id,
      name: row.name,
      type: row.type,
      file_path: row.file_path,
      start_line: row.start_line,
      end_line: row.end_line,
      score: row.score,
      secure: row.secure,
      lengths,
      nameParts,
      nameKey,
      kind: fileKind(row.type, row.file_path),
    };
  }

  private vertexOf(id: string): number {
    let v = this.vertex.get(id);
    if (v === undefined) {
      v = this.vertexIds.length;
      this.vertex.set(id, v);
      this.vertexIds.push(id);
      this.out.push([]);
      this.in.push([]);
    }
    return v;
  }

  private add(map: Map<string, number[]>, key: string, at: number) {
    const list = map.get(key);
    if (list) list.push(at);
    else map.set(key, [at]);
  }

  /** How many nodes hold the term. */
  df(term: string): number {
    return this.postings.get(term)?.nodes.length ?? 0;
  }

  /** The term's postings: the nodes holding it (ascending) and the fields it fills in each; undefined when none does. */
  postingsOf(term: string): Readonly<Postings> | undefined {
    return this.postings.get(term);
  }

  /** Whether another node has this node's id (overloads, repeated ids): search keeps one of them. */
  hasTwin(node: number): boolean {
    return this.twins[node] === 1;
  }

  /** Calls `visit` with each node holding the term and the fields it fills there. */
  forEachPosting(term: string, visit: (node: number, mask: number) => void): void {
    const p = this.postings.get(term);
    if (!p) return;
    for (let i = 0; i < p.nodes.length; i++) visit(p.nodes[i]!, p.masks[i]!);
  }

  /** The fields the term fills in one node (0: none), by binary search of its postings (in node order). */
  fields(term: string, node: number): number {
    const p = this.postings.get(term);
    if (!p) return 0;
    let lo = 0;
    let hi = p.nodes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = p.nodes[mid]!;
      if (at === node) return p.masks[mid]!;
      if (at < node) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  }

  /** Nodes named `name` (any case), or `name` after their container (`retry` → `Ky.retry`), or with id `name`. */
  named(name: string): number[] {
    const lower = name.toLowerCase();
    return [
      ...new Set([
        ...(this.byName.get(lower) ?? []),
        ...(this.bySegment.get(lastSegment(lower)) ?? []).filter((i) =>
          this.nodes[i]!.name.toLowerCase().endsWith(`.${lower}`),
        ),
        ...(this.byId.get(name) ?? []),
      ]),
    ];
  }

  /** The first copy of the node with this id. */
  node(nodeId: string): IndexedNode | undefined {
    const at = this.byId.get(nodeId)?.[0];
    return at === undefined ? undefined : this.nodes[at];
  }

  /** The first copy of the node with this id, GHOSTs included (a packet shows what a walk reaches). */
  anyNode(nodeId: string): IndexedNode | undefined {
    return this.node(nodeId) ?? this.ghosts.get(nodeId);
  }

  /**
   * Nodes within `radius` edges of `nodeId`, against the edge direction (upstream: what depends on
   * it) or along it (downstream), each at its nearest hop with the least edge type (`via`) that
   * reaches it there, and its first copy (none for an id no node holds); ordered by hop, file path,
   * start line (nodes without them last) and id. In process, breadth first: each edge is read once.
   */
  walk(nodeId: string, direction: 'upstream' | 'downstream', radius: number): Reached[] {
    const start = this.vertex.get(nodeId);
    if (start === undefined) return [];
    const edges = direction === 'upstream' ? this.in : this.out;
    const hop = new Map<number, number>([[start, 0]]);
    const via = new Map<number, string>();
    let frontier = [start];
    for (let h = 1; h <= radius && frontier.length > 0; h++) {
      const next: number[] = [];
      for (const v of frontier) {
        for (const e of edges[v]!) {
          const seen = hop.get(e.to);
          if (seen === undefined) {
            hop.set(e.to, h);
            via.set(e.to, e.type);
            next.push(e.to);
          } else if (seen === h && e.type < via.get(e.to)!) {
            via.set(e.to, e.type);
          }
        }
      }
      frontier = next;
    }
    const reached: Reached[] = [];
    for (const [v, h] of hop) {
      if (v === start) continue;
      const id = this.vertexIds[v]!;
      reached.push({ node_id: id, hop: h, via: via.get(v)!, node: this.anyNode(id) ?? null });
    }
    return reached.sort(
      (a, b) =>
        a.hop - b.hop ||
        nullsLast(a.node?.file_path, b.node?.file_path, compareText) ||
        nullsLast(a.node?.start_line, b.node?.start_line, (x, y) => x - y) ||
        compareText(a.node_id, b.node_id),
    );
  }

  /** The edges among these node ids, one per (from, to, type), none from a node to itself; by from, to, type. */
  edgesAmong(ids: string[]): Array<{ from_id: string; to_id: string; type: string }> {
    const inSet = new Set<number>();
    for (const id of ids) {
      const v = this.vertex.get(id);
      if (v !== undefined) inSet.add(v);
    }
    const seen = new Set<string>();
    const edges: Array<{ from_id: string; to_id: string; type: string }> = [];
    for (const from of inSet) {
      for (const e of this.out[from]!) {
        if (e.to === from || !inSet.has(e.to)) continue;
        const key = `${from}\u0000${e.to}\u0000${e.type}`;
        if (seen.has(key)) continue;
        seen.add(key);
        edges.push({ from_id: this.vertexIds[from]!, to_id: this.vertexIds[e.to]!, type: e.type });
      }
    }
    return edges.sort(
      (a, b) => compareText(a.from_id, b.from_id) || compareText(a.to_id, b.to_id) || compareText(a.type, b.type),
    );
  }

  /** A rough count of the memory the index holds, in bytes (for the cache's bound). */
  get size(): number {
    let bytes = this.nodes.length * 2000; // a node's strings, lengths and adjacency (measured: theia 63 MiB)
    bytes += this.vertexIds.length * 120 + this.vertex.size * 60;
    for (const list of this.out) bytes += list.length * 2 * 40;
    for (const [lexeme, p] of this.postings) bytes += lexeme.length * 2 + 150 + p.nodes.length * 5;
    return bytes;
  }
}

/** A node a walk reached (walk): its id, nearest hop, the edge type that reached it there, and its first copy. */
export interface Reached {
  node_id: string;
  hop: number;
  via: string;
  node: IndexedNode | null;
}

/**
 * Strings in code point order (what Postgres's C collation gives): UTF-16 code units compare so but
 * for surrogates, which stand for code points above every other unit's.
 */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number) =>
  unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit;

/** `a` before `b` by `compare`, a missing value after any present one. */
function nullsLast<T>(a: T | null | undefined, b: T | null | undefined, compare: (x: T, y: T) => number): number {
  if (a == null) return b == null ? 0 : 1;
  if (b == null) return -1;
  return compare(a, b);
}

/** `Ky.retry` and `src/a.ts::f` name `retry` and `f` after their container. */
export const lastSegment = (name: string) => name.split(/::|\./).pop() ?? name;

/** Most memory the indexes of one service hold together (least recently used ones go first). */
export const SEARCH_INDEX_BUDGET = 512 * 1024 * 1024;

/**
 * The search indexes of a service's commits, least recently used dropped past a memory budget.
 * Keyed by commit and upload time: a commit uploaded again is indexed again.
 */
export class SearchIndexCache {
  private readonly entries = new Map<string, { index: Promise<SearchIndex>; size: number }>();

  constructor(private readonly budget = SEARCH_INDEX_BUDGET) {}

  get(db: Kysely<Database>, g: { graphId: string; commitHash: string; uploadedAt: string }): Promise<SearchIndex> {
    const key = `${g.graphId}\u0000${g.commitHash}\u0000${g.uploadedAt}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.index;
    }
    const entry = { index: SearchIndex.build(db, g), size: 0 };
    this.entries.set(key, entry);
    entry.index.then(
      (index) => {
        entry.size = index.size;
        this.trim();
      },
      () => this.entries.delete(key),
    );
    return entry.index;
  }

  private trim() {
    let total = 0;
    for (const e of this.entries.values()) total += e.size;
    for (const [key, e] of this.entries) {
      if (total <= this.budget || this.entries.size <= 1) break;
      this.entries.delete(key);
      total -= e.size;
    }
  }
}
