import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { llmSummaries } from '../../db/queries/graphs/ingest.js';
import type { Database } from '../../db/schema.js';
import { isObject } from './upload-checks.js';

/**
 * Issue 25: an upload keeps the model-written summaries of the commit it follows for the nodes
 * whose code did not change. A node of the new upload that has code and no summaries of a model
 * (`metadata.summarySource` is not `llm`: none, or only its doc comment) takes the technical,
 * business and security summaries of the node with the same id in `previous`, when that one was
 * summarized by a model and its code is byte for byte the same (md5 of the code on both sides).
 * `metadata.summaryCarriedFrom` names the commit they came from. Changes `nodes` in place, before
 * they are validated and stored (their search documents then hold the summaries).
 */
export async function carryOverSummaries(
  trx: Kysely<Database>,
  graphId: string,
  previous: string,
  nodes: unknown[],
): Promise<number> {
  const wanting = new Map<string, Array<Record<string, unknown>>>();
  for (const node of nodes) {
    if (!isObject(node) || typeof node.id !== 'string' || typeof node.rawCode !== 'string') continue;
    const metadata = node.metadata;
    if (metadata !== undefined && metadata !== null && !isObject(metadata)) continue;
    if (isObject(metadata) && metadata.summarySource === 'llm') continue;
    wanting.set(node.id, [...(wanting.get(node.id) ?? []), node]);
  }
  if (wanting.size === 0) return 0;
  let carried = 0;
  for (const row of await llmSummaries(trx, graphId, previous, [...wanting.keys()])) {
    for (const node of wanting.get(row.node_id) ?? []) {
      if (
        createHash('md5')
          .update(node.rawCode as string)
          .digest('hex') !== row.code_md5
      )
        continue;
      if (row.technical_summary !== null) node.technicalSummary = row.technical_summary;
      if (row.business_summary !== null) node.businessSummary = row.business_summary;
      if (row.security_severity !== null || row.security_summary !== null)
        node.security = {
          ...(row.security_severity !== null ? { severity: row.security_severity } : {}),
          ...(row.security_summary !== null ? { summary: row.security_summary } : {}),
        };
      node.metadata = {
        ...(isObject(node.metadata) ? node.metadata : {}),
        summarySource: 'llm',
        ...(row.model !== null ? { summaryModel: row.model } : {}),
        summaryCarriedFrom: previous,
      };
      carried++;
    }
  }
  return carried;
}
