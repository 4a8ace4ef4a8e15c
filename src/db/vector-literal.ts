import { halfvecToSql } from 'pgvector/utils';

/**
 * A vector as a query parameter in pgvector's text form (`[0.1,-2,3]`), serialised by the pgvector
 * package (its halfvec helper: the columns are halfvec). The statement casts it
 * (`${vectorLiteral(v)}::halfvec(768)`), so the same text works on node-postgres and PGlite, and the
 * cast matches the HNSW indexes' expression. The values are finite (the embedder's answer is checked,
 * see embeddings/provider.ts): JSON's number form is then JavaScript's, digit for digit.
 */
export function vectorLiteral(vector: readonly number[]): string {
  return halfvecToSql(vector) as string;
}
