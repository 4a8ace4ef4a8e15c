/**
 * The misses of bench:context taken apart (issue 21): for every natural-language question, where
 * its gold nodes rank in find_symbols' top 25 (with each hit's relevance), what the ANSWER is,
 * and the terms the question was searched by. Reads the same question files and checkouts as
 * bench/context.ts, analyzes and uploads each repository to a scratch database (PGlite, or
 * Postgres when DATABASE_URL is set), and writes a plain-text report to stdout. A tool to read,
 * not a benchmark: it judges nothing.
 *
 *   npx tsx bench/context-misses.ts --checkouts ../checkouts [--only kysely] [--all] [--keep]
 *
 * `--all` shows the questions answered too; `--keep` leaves the scratch database (for a closer look).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { searchTerms } from '../src/domain/graphs/search-terms.js';
import { type ContextQuestion, uploadCheckout } from './lib/checkout-graph.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { readPacket } from './lib/context-packet.js';
import { scratchPglite, scratchPostgres } from './lib/scratch.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function call(service: ServiceProcess, name: string, args: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${service.url}/api/v1/tools/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${name}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      checkouts: { type: 'string', default: join(ROOT, '../checkouts') },
      only: { type: 'string' },
      all: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  const dir = join(ROOT, 'bench/context/questions');
  const files = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  const databaseUrl = process.env.DATABASE_URL;
  delete process.env.DATABASE_URL;
  const scratch = databaseUrl ? await scratchPostgres(databaseUrl) : await scratchPglite();
  const service = await startService({
    cwd: ROOT,
    env: { ...scratch.env, LOG_LEVEL: 'warn', AUTH: 'off', GRAPH_UPLOAD_LIMIT: '1GB', EMBEDDING_PROVIDER: 'none' },
  });
  try {
    for (const name of files) {
      const file = JSON.parse(await readFile(join(dir, name), 'utf8')) as {
        repo: string;
        questions: ContextQuestion[];
      };
      if (values.only && file.repo !== values.only) continue;
      const commit = await uploadCheckout(service.url, values.checkouts!, file.repo);
      const names = new Map(commit.nodes.map((n) => [n.id, `${n.type} ${n.startLine}-${n.endLine}`]));
      for (const q of file.questions) {
        if (q.category === 'identifier') continue;
        const rc = await call(service, 'resolve_context', { task: q.question, intent: q.intent, repo: file.repo });
        const fs = await call(service, 'find_symbols', { query: q.question, limit: 25, repo: file.repo });
        const packet = readPacket(rc.packet as string);
        const hits = fs.symbols as Array<{ nodeId: string; relevance: number; type: string }>;
        const hit = packet.answer !== null && q.gold.includes(packet.answer);
        const firstGold = hits.findIndex((h) => q.gold.includes(h.nodeId));
        if (hit && firstGold === 0 && !values.all) continue;
        const t = searchTerms(q.question);
        console.log(`\n## ${q.id} (${q.category}/${q.intent}) ${hit ? 'ANSWER ok' : 'ANSWER miss'}: ${q.question}`);
        console.log(
          `   words: ${t.words.join(' ')}${t.identifiers.length ? ` | ids: ${t.identifiers.join(' ')}` : ''}${t.asksCallers ? ' | callers' : ''}${t.asksDefinition ? ' | definition' : ''}`,
        );
        console.log(`   ANSWER ${packet.answer}  packet: ${packet.ids.length} nodes`);
        for (const g of q.gold) {
          const at = hits.findIndex((h) => h.nodeId === g);
          const inPacket = packet.ids.indexOf(g);
          console.log(
            `   gold ${g} [${names.get(g) ?? 'NOT IN GRAPH'}] find ${at === -1 ? '—' : at + 1}${at === -1 ? '' : ` r=${hits[at]!.relevance}`} packet ${inPacket === -1 ? '—' : inPacket + 1}`,
          );
        }
        for (const [i, h] of hits.slice(0, 6).entries())
          console.log(
            `   ${i + 1}. ${q.gold.includes(h.nodeId) ? '*' : ' '} ${h.nodeId} [${names.get(h.nodeId)}] r=${h.relevance}`,
          );
      }
    }
  } finally {
    await service.stop();
    if (values.keep) console.error(`kept the scratch database: ${scratch.label}`);
    else await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
