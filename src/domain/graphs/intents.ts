/** resolve_context's intents: how each expands from its seeds and the budget it gets (design.md §7). */
export const INTENTS = [
  'pinpoint',
  'reference-list',
  'flow',
  'overview',
  'concept',
  'security-audit',
  'exploratory',
] as const;
export type Intent = (typeof INTENTS)[number];

/** How each intent expands from its seeds (design.md §7). */
export const EXPANSION: Record<Intent, { directions: Array<'upstream' | 'downstream'>; radius: number }> = {
  pinpoint: { directions: ['upstream', 'downstream'], radius: 1 },
  'reference-list': { directions: ['upstream'], radius: 2 },
  flow: { directions: ['downstream'], radius: 2 },
  'security-audit': { directions: ['upstream'], radius: 2 },
  overview: { directions: ['upstream', 'downstream'], radius: 2 },
  concept: { directions: ['upstream', 'downstream'], radius: 2 },
  exploratory: { directions: ['upstream', 'downstream'], radius: 2 },
};
/** Default budgets in tokens, before scaling by repo size. */
const BASE_BUDGET: Record<Intent, number> = {
  pinpoint: 1500,
  'reference-list': 1500,
  flow: 2500,
  overview: 2500,
  concept: 2500,
  'security-audit': 2500,
  exploratory: 2500,
};
/** The budget an intent gets on a repo of `nodes` nodes: larger repos get up to twice as much. */
export function defaultBudget(intent: Intent, nodes: number): number {
  const factor = Math.min(2, Math.max(1, Math.log10(Math.max(nodes, 1)) / 3));
  return Math.round(BASE_BUDGET[intent] * factor);
}
