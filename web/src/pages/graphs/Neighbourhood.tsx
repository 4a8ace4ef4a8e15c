import { useEffect, useRef, useState } from 'react';
import type { ElementDefinition } from 'cytoscape';
import { graphsHref, isGhost, type NodeDetail, type Neighbour } from './model';

type Role = 'centre' | 'caller' | 'callee';

const GAP_X = 240;
const GAP_Y = 56;
/** Neighbours per column before another column starts further out, so a popular node stays legible. */
const PER_COLUMN = 10;

/** Column positions for `count` nodes on one side (`side` -1 left, 1 right) of the centre. */
function column(count: number, side: -1 | 1): { x: number; y: number }[] {
  return Array.from({ length: count }, (_, i) => {
    const col = Math.floor(i / PER_COLUMN);
    const inCol = Math.min(PER_COLUMN, count - col * PER_COLUMN);
    return { x: side * GAP_X * (col + 1), y: (i % PER_COLUMN) * GAP_Y - ((inCol - 1) * GAP_Y) / 2 };
  });
}

/**
 * The node, callers on the left, callees on the right (one hop), edges labelled by type. A node that is
 * both caller and callee is drawn once, on the callers' side; a self-call is a loop on the centre.
 */
export function elements(centre: NodeDetail['node'], callers: Neighbour[], callees: Neighbour[]): ElementDefinition[] {
  const nodes = new Map<string, { label: string; role: Role; ghost: boolean }>([
    [centre.nodeId, { label: centre.name, role: 'centre', ghost: false }],
  ]);
  const edges = new Map<string, { source: string; target: string; label: string }>();
  for (const [list, role] of [
    [callers, 'caller'],
    [callees, 'callee'],
  ] as const) {
    for (const n of list) {
      if (!nodes.has(n.nodeId)) nodes.set(n.nodeId, { label: n.name, role, ghost: isGhost(n) });
      const [source, target] = role === 'caller' ? [n.nodeId, centre.nodeId] : [centre.nodeId, n.nodeId];
      edges.set(`${source}\n${target}\n${n.edgeType}`, { source, target, label: n.edgeType.toLowerCase() });
    }
  }
  const sides = { caller: [] as string[], callee: [] as string[] };
  for (const [id, n] of nodes) if (n.role !== 'centre') sides[n.role].push(id);
  const at = new Map<string, { x: number; y: number }>([[centre.nodeId, { x: 0, y: 0 }]]);
  for (const [role, side] of [
    ['caller', -1],
    ['callee', 1],
  ] as const) {
    const places = column(sides[role].length, side);
    sides[role].forEach((id, i) => at.set(id, places[i]!));
  }
  return [
    ...[...nodes].map(([id, n]) => ({
      group: 'nodes' as const,
      data: { id, ...n },
      position: at.get(id)!,
      classes: [n.role, n.ghost ? 'ghost' : ''].join(' '),
    })),
    ...[...edges].map(([id, e]) => ({ group: 'edges' as const, data: { id, ...e } })),
  ];
}

const STYLE = [
  {
    selector: 'node',
    style: {
      shape: 'round-rectangle',
      width: 14,
      height: 14,
      'background-color': '#0b5cad',
      label: 'data(label)',
      color: '#1a1a1a',
      'font-size': 13,
      'text-valign': 'bottom',
      'text-margin-y': 4,
      'text-wrap': 'ellipsis',
      'text-max-width': '200px',
    },
  },
  { selector: 'node.centre', style: { width: 22, height: 22, 'background-color': '#12263a', 'font-weight': 'bold' } },
  { selector: 'node.callee', style: { 'background-color': '#1d6b36' } },
  {
    selector: 'node.ghost',
    style: {
      'background-color': '#fff',
      'border-width': 2,
      'border-style': 'dashed',
      'border-color': '#5a6370',
      color: '#3d4550',
    },
  },
  {
    selector: 'edge',
    style: {
      width: 1.5,
      'line-color': '#7a8594',
      'target-arrow-color': '#7a8594',
      'target-arrow-shape': 'triangle',
      'curve-style': 'bezier',
      label: 'data(label)',
      'font-size': 11,
      color: '#3d4550',
      'text-background-color': '#fff',
      'text-background-opacity': 1,
      'text-rotation': 'autorotate',
    },
  },
] as const;

/**
 * The one-hop neighbourhood drawn with cytoscape.js, loaded on first use (its chunk is not part of the
 * other pages). Clicking a node opens it. The canvas is for the eye only: the callers and callees lists
 * beside it carry the same links for keyboards and screen readers. `data-node-count` says how many
 * nodes are drawn once the drawing is done.
 */
export function Neighbourhood({
  graphId,
  node,
  callers,
  callees,
}: {
  graphId: string;
  node: NodeDetail['node'];
  callers: Neighbour[];
  callees: Neighbour[];
}) {
  const box = useRef<HTMLDivElement>(null);
  const [drawn, setDrawn] = useState<number | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let cy: import('cytoscape').Core | undefined;
    let live = true;
    setDrawn(null);
    import('cytoscape')
      .then(({ default: cytoscape }) => {
        if (!live || !box.current) return;
        cy = cytoscape({
          container: box.current,
          elements: elements(node, callers, callees),
          style: STYLE as unknown as import('cytoscape').StylesheetJson,
          layout: { name: 'preset', fit: true, padding: 32 },
          userZoomingEnabled: false,
          boxSelectionEnabled: false,
          autoungrabify: true,
          maxZoom: 1.5,
        });
        const container = box.current;
        cy.on('tap', 'node', (event) => {
          const target = event.target as import('cytoscape').NodeSingular;
          if (target.id() !== node.nodeId && !target.hasClass('ghost'))
            window.location.hash = graphsHref.node(graphId, target.id());
        });
        cy.on('mouseover', 'node', (event) => {
          const target = event.target as import('cytoscape').NodeSingular;
          container.style.cursor = target.id() === node.nodeId || target.hasClass('ghost') ? 'default' : 'pointer';
        });
        cy.on('mouseout', 'node', () => {
          container.style.cursor = 'default';
        });
        setDrawn(cy.nodes().length);
      })
      .catch((error: unknown) => live && setFailed(error instanceof Error ? error.message : String(error)));
    return () => {
      live = false;
      cy?.destroy();
    };
  }, [graphId, node, callers, callees]);

  const neighbours = (drawn ?? 1) - 1;
  return (
    <figure className="hood">
      <div
        ref={box}
        className="hood-canvas"
        role="img"
        aria-label={`Graph of ${node.name} with ${callers.length} callers on the left and ${callees.length} callees on the right; the same nodes are listed below.`}
        data-node-count={drawn ?? undefined}
      />
      <figcaption className="status">
        {failed
          ? `The graph could not be drawn (${failed}); the lists below have the same nodes.`
          : drawn === null
            ? 'Drawing…'
            : neighbours === 0
              ? 'No callers or callees in this commit.'
              : 'Callers left, callees right (green); dashed: not in this commit. Click a node to open it.'}
      </figcaption>
    </figure>
  );
}
