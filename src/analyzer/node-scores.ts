import type { GraphEdge, GraphNode } from '../commit-file.js';

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * A structural score per node, DevLens-style (higher = more central): `2·log2(1 + in-degree) +
 * log2(1 + out-degree)` over every edge, so a symbol many others call or import outranks one
 * that only calls out. Sets `score` on each node and returns the `nodeScores` map.
 */
export function scoreNodes(nodes: GraphNode[], edges: GraphEdge[]): Record<string, number> {
  const incoming = new Map<string, number>();
  const outgoing = new Map<string, number>();
  for (const edge of edges) {
    incoming.set(edge.to, (incoming.get(edge.to) ?? 0) + 1);
    outgoing.set(edge.from, (outgoing.get(edge.from) ?? 0) + 1);
  }
  const scores: Record<string, number> = {};
  for (const node of nodes) {
    node.score = round(2 * Math.log2(1 + (incoming.get(node.id) ?? 0)) + Math.log2(1 + (outgoing.get(node.id) ?? 0)));
    scores[node.id] = node.score;
  }
  return scores;
}
