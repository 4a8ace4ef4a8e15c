import type { EdgeType, GraphEdge, GraphNode } from '../commit-file.js';

/**
 * Collects the nodes and edges of one analysis. Ids are unique: the first node added under an id
 * keeps it (overloads and merged declarations arrive as one node). Edges are unique per
 * (type, from, to); an edge whose end is not a node when the graph is built is dropped, so the
 * output never holds a dangling reference.
 */
export class GraphBuilder {
  private readonly nodeMap = new Map<string, GraphNode>();
  private readonly edgeMap = new Map<string, GraphEdge>();

  /** Adds `node` unless its id is taken; returns the node stored under the id either way. */
  addNode(node: GraphNode): GraphNode {
    const existing = this.nodeMap.get(node.id);
    if (existing) return existing;
    this.nodeMap.set(node.id, node);
    return node;
  }

  node(id: string): GraphNode | undefined {
    return this.nodeMap.get(id);
  }

  /** Adds an edge unless the same (type, from, to) is there already (the first one's metadata stays). */
  addEdge(from: string, to: string, type: EdgeType, metadata?: Record<string, unknown>): void {
    const key = `${type}\0${from}\0${to}`;
    if (this.edgeMap.has(key)) return;
    this.edgeMap.set(
      key,
      metadata && Object.keys(metadata).length > 0 ? { from, to, type, metadata } : { from, to, type },
    );
  }

  /** The nodes in insertion order and the edges whose two ends exist; `dropped` counts the others. */
  build(): { nodes: GraphNode[]; edges: GraphEdge[]; dropped: number } {
    const edges: GraphEdge[] = [];
    let dropped = 0;
    for (const edge of this.edgeMap.values()) {
      if (this.nodeMap.has(edge.from) && this.nodeMap.has(edge.to)) edges.push(edge);
      else dropped++;
    }
    return { nodes: [...this.nodeMap.values()], edges, dropped };
  }
}
