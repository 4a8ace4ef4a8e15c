import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The in-repo code graph the DevLens tests upload: `wren`, a small fictional fetch-based HTTP client
 * (TypeScript), as DevLens writes a graph folder — `<graphId>/meta.json` and `commits/<hash>.json`.
 * Structure only (no summaries). Its shape and quirks: test/fixtures/graphs/README.md.
 */
export const WREN_GRAPH_ID = '090e362366e56fbb';
export const WREN_COMMIT = '25344fbd02fdd664c259f49ca161f22a585f01ba';
/** The graph folder (what `devstream-hub upload <folder>` takes). */
export const WREN_FOLDER = fileURLToPath(new URL(`../fixtures/graphs/${WREN_GRAPH_ID}/`, import.meta.url));
/** The commit file. */
export const WREN_FILE = `${WREN_FOLDER}commits/${WREN_COMMIT}.json`;
export const wrenText = readFileSync(WREN_FILE, 'utf8');
export const wren = JSON.parse(wrenText) as {
  commitHash: string;
  analyzedAt: string;
  nodes: Array<{
    id: string;
    name: string;
    type: string;
    filePath: string;
    startLine: number;
    endLine: number;
    rawCode?: string;
    score: number;
    codeHash?: string;
  }>;
  edges: Array<{ from: string; to: string; type: string }>;
};
/** The first node with this id. */
export const wrenNode = (id: string) => {
  const node = wren.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`the wren fixture has no node ${id}`);
  return node;
};

/** Uploads the wren commit as repo `wren` (branch main) to the service at `url`; fails the test unless 201. */
export async function uploadWren(url: string, headers: Record<string, string> = {}): Promise<void> {
  const uploaded = await fetch(`${url}/api/v1/graphs?repo=wren&branch=main`, {
    method: 'POST',
    body: wrenText,
    headers: { 'content-type': 'application/json', ...headers },
  });
  assert.equal(uploaded.status, 201, await uploaded.text());
}
