/**
 * `npm run bench:summarize` (issue 25): what `analyze --summarize` costs beyond the model's own
 * time. 10,000 synthetic symbols are summarized through the real `ollama` client against a fake
 * chat model on loopback that answers at once (support/fake-ollama.ts), so the wall time is the
 * summarizer's own overhead (prompts, HTTP, parsing, bookkeeping); then the same commit again with
 * the first run's summaries as `--previous` (the model must be asked nothing), then a commit with
 * 20 functions changed (the model must be asked about those 20).
 *
 *   npm run bench:summarize                    10,000 nodes, concurrency 4
 *   npm run bench:summarize -- --nodes 20000 --concurrency 8
 *
 * Writes bench/results/summarize.json and summarize.md. Target: under 60 s of overhead for 10,000 nodes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { knownSummaries, summarizeNodes } from '../src/analyzer/summarize.js';
import type { GraphNode } from '../src/commit-file.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { gitInfo } from './lib/git.js';
import { machine } from './lib/machine.js';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const TARGET_S = 60;
const CHANGED = 20;

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '4' } },
});
const count = Number(values.nodes);
const concurrency = Number(values.concurrency);

/** Symbols of a plausible size (a 12-line function each, with a doc comment on every third). */
function nodes(n: number, changed = 0): GraphNode[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `handler${i}`;
    const body = Array.from({ length: 10 }, (_, l) => `  const v${l} = input.field${l} ?? ${i + l};`).join('\n');
    return {
      id: `src/mod${i % 200}.ts::${name}`,
      name,
      type: i % 5 === 0 ? 'METHOD' : 'FUNCTION',
      filePath: `src/mod${i % 200}.ts`,
      startLine: 1 + (i % 50) * 14,
      endLine: 13 + (i % 50) * 14,
      rawCode: `export function ${name}(input: Input): Output {\n${body}\n  return { ok: true${i < changed ? ', changed: 1' : ''} };\n}`,
      parentFile: `file::src/mod${i % 200}.ts`,
      ...(i % 3 === 0
        ? { technicalSummary: `Handles case ${i}.`, metadata: { summarySource: 'doc-comment' } }
        : { metadata: {} }),
    };
  });
}

const model = await new FakeOllama().start();
const rssBefore = process.memoryUsage().rss;
const run = async (label: string, input: GraphNode[], known?: ReturnType<typeof knownSummaries>) => {
  model.chatCalls.length = 0;
  const started = performance.now();
  const result = await summarizeNodes(input, {
    host: model.url,
    model: 'fake-coder',
    concurrency,
    ...(known ? { known } : {}),
  });
  const seconds = (performance.now() - started) / 1000;
  const row = {
    run: label,
    nodes: result.total,
    asked_model: model.chatCalls.length,
    answered: result.answered,
    reused: result.reused,
    failed: result.failed,
    seconds: Math.round(seconds * 100) / 100,
    nodes_per_s: Math.round(result.total / seconds),
  };
  console.log(JSON.stringify(row));
  return row;
};

const first = nodes(count);
const rows = [await run('first run (every node asked)', first)];
const known = knownSummaries(first);
rows.push(await run('same commit, --previous of the first', nodes(count), known));
rows.push(await run(`${CHANGED} functions changed, --previous of the first`, nodes(count, CHANGED), known));
const peakRssMib = Math.round(Math.max(process.memoryUsage().rss, rssBefore) / 2 ** 20);
await model.stop();

const overhead = rows[0]!.seconds;
const checks = {
  overhead_under_60s: overhead < TARGET_S,
  same_commit_asks_nothing: rows[1]!.asked_model === 0,
  changed_asks_only_those: rows[2]!.asked_model === CHANGED,
};
const result = {
  benchmark: 'summarize',
  date: new Date().toISOString(),
  git: gitInfo(fileURLToPath(new URL('../', import.meta.url))),
  machine: machine(),
  settings: { nodes: count, concurrency, model: 'fake chat model on loopback (answers at once)' },
  rows,
  peak_rss_mib: peakRssMib,
  checks,
};
await mkdir(RESULTS_DIR, { recursive: true });
await writeFile(`${RESULTS_DIR}summarize.json`, `${JSON.stringify(result, null, 2)}\n`);
const md = [
  `# bench:summarize — analyze --summarize's own cost (${result.date.slice(0, 10)})`,
  '',
  `Machine: ${result.machine.cpus} × ${result.machine.cpu_model}, ${result.machine.total_memory_gib} GiB, Node ${result.machine.node}. ` +
    `${count.toLocaleString('en')} synthetic symbols (12-line functions, a doc comment on every third), concurrency ${concurrency}, ` +
    'through the real `ollama` client to a fake chat model on loopback that answers at once: the time is the summarizer’s own.',
  '',
  '| run | nodes | model asked | reused | failed | seconds | nodes/s |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) => `| ${r.run} | ${r.nodes} | ${r.asked_model} | ${r.reused} | ${r.failed} | ${r.seconds} | ${r.nodes_per_s} |`,
  ),
  '',
  `Overhead for ${count.toLocaleString('en')} nodes: ${overhead} s (target < ${TARGET_S} s) ${checks.overhead_under_60s ? '✅' : '❌'}; ` +
    `the same commit again asks the model ${rows[1]!.asked_model} times ${checks.same_commit_asks_nothing ? '✅' : '❌'}; ` +
    `${CHANGED} changed functions ask it ${rows[2]!.asked_model} times ${checks.changed_asks_only_those ? '✅' : '❌'}. ` +
    `Peak RSS ${peakRssMib} MiB.`,
  '',
];
await writeFile(`${RESULTS_DIR}summarize.md`, md.join('\n'));
console.log(md.join('\n'));
if (!Object.values(checks).every(Boolean)) process.exitCode = 1;
