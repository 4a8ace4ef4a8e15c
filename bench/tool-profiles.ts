/**
 * `npm run bench:tool-profiles`: what the tool definitions of each profile (`?tools=` on the MCP URL)
 * cost an agent's context: the `tools/list` result a key with every scope gets, in each protocol era,
 * as JSON characters and as tokens by the estimate resolve_context's packets use (characters / 4).
 * Writes bench/results/tool-profiles.{json,md}.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { approxTokens } from '../src/domain/graphs/resolve-context.js';
import { describeTools, TOOL_PROFILES, type ToolProfile } from '../src/mcp/server.js';
import { tools } from '../src/operations/index.js';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const rows: Array<{ profile: ToolProfile; era: 'legacy' | 'modern'; tools: number; chars: number; tokens: number }> =
  [];
for (const profile of Object.keys(TOOL_PROFILES) as ToolProfile[])
  for (const era of ['legacy', 'modern'] as const) {
    const listed = describeTools(tools, undefined, era, profile);
    const json = JSON.stringify({ tools: listed });
    rows.push({ profile, era, tools: listed.length, chars: json.length, tokens: approxTokens(json) });
  }

const md = [
  `# Tool profiles: the cost of tools/list (${new Date().toISOString().slice(0, 10)})`,
  '',
  'A key with every scope; JSON characters of the result, tokens estimated as characters / 4.',
  '',
  '| profile | era | tools | characters | ≈ tokens |',
  '| --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) => `| ${r.profile} | ${r.era === 'modern' ? '2026-07-28' : '2025'} | ${r.tools} | ${r.chars} | ${r.tokens} |`,
  ),
  '',
].join('\n');
await mkdir(RESULTS_DIR, { recursive: true });
await writeFile(
  `${RESULTS_DIR}tool-profiles.json`,
  JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + '\n',
);
await writeFile(`${RESULTS_DIR}tool-profiles.md`, md);
console.log(md);
