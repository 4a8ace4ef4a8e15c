import type { ContentType } from '../../db/schema.js';
import { preview } from '../preview.js';
import type { Hit } from './model.js';
import type { SearchMemoryResult } from './search-memory.js';
import type { StoreMemoryResult } from './store-memory.js';

const TYPE_ICON: Record<ContentType, string> = {
  decision: '🎯',
  code: '💻',
  documentation: '📚',
  context: '🧩',
  output: '📤',
  error: '🐛',
  learning: '💡',
};

/** The spec's mark of a cut content preview. */
const MORE = '...';

export function renderStoredMemory(r: StoreMemoryResult, input: { content: string }): string {
  const embedding = r.embedding_generated
    ? `✅ Generated (${r.embedding_dimensions}D, ${r.embedding_model})`
    : `❌ Failed — ${r.embedding_note ?? 'no vector yet'}`;
  const lines = [
    '✅ **Memory Stored Successfully**',
    '',
    ...(r.duplicate
      ? ['♻️ **Duplicate**: this content was already stored in this project; this is that memory', '']
      : []),
    `📝 **Content Type**: ${r.content_type}`,
    `📁 **Project**: ${r.project ?? '(none)'}`,
    `📊 **Importance Score**: ${r.importance_score.toFixed(2)}`,
    `🏷️ **Keywords**: ${r.keywords.length > 0 ? r.keywords.join(', ') : '(none)'}`,
    `📍 **Source**: ${r.source}`,
    `🆔 **Memory ID**: \`${r.memory_id}\``,
    `🧠 **Embedding**: ${embedding}`,
    '',
    `💾 **Content Preview**: ${preview(input.content, 100, MORE)}`,
    '',
    r.embedding_generated
      ? 'The information has been stored in DevStream semantic memory with vector search capability and can be retrieved using search queries.'
      : 'The information has been stored in DevStream semantic memory (text-only for now: keyword search finds it already, and vector search will once the embedding worker has added its vector) and can be retrieved using search queries.',
  ];
  return lines.join('\n');
}

/**
 * How strongly the branches that ran agree on a hit: HIGH when each ranks it in its top 5, MEDIUM
 * when one ranks it in its top 20, LOW otherwise. (The fused score, printed as the RRF Score, only orders hits.)
 */
export function relevanceLabel(hit: Hit, method: SearchMemoryResult['method']): 'HIGH' | 'MEDIUM' | 'LOW' {
  const ranks = method === 'hybrid' ? [hit.vector_rank, hit.keyword_rank] : [hit.keyword_rank];
  if (ranks.every((r) => r !== null && r <= 5)) return 'HIGH';
  if (ranks.some((r) => r !== null && r <= 20)) return 'MEDIUM';
  return 'LOW';
}

function rankLine(hit: Hit): string {
  const parts: string[] = [];
  if (hit.vector_rank !== null) parts.push(`Vector Rank: #${hit.vector_rank} (distance: ${hit.distance?.toFixed(4)})`);
  if (hit.keyword_rank !== null) parts.push(`Keyword Rank: #${hit.keyword_rank}`);
  return parts.join(' • ');
}

export function renderSearchResults(r: SearchMemoryResult): string {
  const hybrid = r.method === 'hybrid';
  const lines = [
    `🔍 **DevStream ${hybrid ? 'Hybrid' : 'Keyword'} Search Results**`,
    '',
    `Query: "${r.query}"`,
    `Method: ${hybrid ? 'Hybrid (Vector + Keyword)' : `Keyword (vector search unavailable: ${r.method_note ?? 'no query embedding'})`}`,
    `Found: ${r.total} result${r.total === 1 ? '' : 's'}`,
  ];
  r.results.forEach((hit, i) => {
    lines.push(
      '',
      `${i + 1}. ${TYPE_ICON[hit.content_type]} **${hit.content_type.toUpperCase()}** Memory${hit.project ? ` (${hit.project})` : ''}`,
      `   📊 Relevance: ${relevanceLabel(hit, r.method)} (RRF Score: ${hit.rrf_score.toFixed(4)})`,
      `   🔬 ${rankLine(hit)}`,
      `   💾 Content: ${preview(hit.content, 200, MORE)}`,
      `   🆔 ID: \`${hit.memory_id}\``,
      `   📅 Created: ${hit.created_at.slice(0, 10)}`,
    );
  });
  lines.push(
    '',
    r.total === 0
      ? '💡 **Tip**: Nothing matched. Try other words, drop a filter, or search every project by leaving `project` out.'
      : hybrid
        ? '💡 **Tip**: Hybrid search combines semantic similarity and keyword matching for better results.'
        : '💡 **Tip**: Keyword search matches words (stemmed); hybrid search returns when the embedder answers.',
  );
  return lines.join('\n');
}

export function renderDeletedMemory(r: { memory_id: string }): string {
  return [
    '🗑️ **Memory Deleted**',
    '',
    `🆔 **Memory ID**: \`${r.memory_id}\``,
    '',
    'Its content, keywords and vector were erased; it no longer appears in searches.',
  ].join('\n');
}
