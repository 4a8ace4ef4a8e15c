import { createHash } from 'node:crypto';
import type { ContentFormat, ContentType } from '../../db/schema.js';

/** sha256 of the content: what "identical content" means for de-duplication. */
export function contentHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/**
 * The spec's format detection, in its order: JSON when it starts with `{` or `[` (and parses),
 * code when it has backticks or `def` / `function`, Markdown when it has headings or bold, and
 * otherwise what the content type suggests.
 */
export function detectFormat(content: string, type: ContentType): ContentFormat {
  const trimmed = content.trimStart();
  if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && parsesAsJson(trimmed)) return 'json';
  if (/`|\bdef\s|\bfunction\b/.test(content)) return 'code';
  if (/^#{1,6}\s|\*\*/m.test(content)) return 'markdown';
  return type === 'code' ? 'code' : 'text';
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The spec's type weights; the ones it leaves to "etc." rank below code. */
const TYPE_WEIGHT: Record<ContentType, number> = {
  error: 0.9,
  decision: 0.8,
  learning: 0.8,
  code: 0.7,
  documentation: 0.6,
  context: 0.5,
  output: 0.4,
};

/**
 * The spec's importance score: type weight + min(length/1000, 1)·0.2 + min(keywords/10, 1)·0.2,
 * clamped to 0.1–1.0 and rounded to two decimals (what is stored is what is shown).
 */
export function importanceScore(type: ContentType, content: string, keywordCount: number): number {
  const raw = TYPE_WEIGHT[type] + Math.min(content.length / 1000, 1) * 0.2 + Math.min(keywordCount / 10, 1) * 0.2;
  return Math.round(Math.min(1, Math.max(0.1, raw)) * 100) / 100;
}

/** Keywords as stored: trimmed, lowercase, without blanks or repeats, in the caller's order. */
export function normalizeKeywords(keywords: readonly string[]): string[] {
  return [...new Set(keywords.map((k) => k.trim().toLowerCase()).filter((k) => k !== ''))];
}
