// The verdict of one conformance scenario run (scripts/conformance.sh): reads the suite's
// checks.json, prints the pass count, and exits 0 when every failed check is listed as not
// applicable (with its reason) in scripts/conformance-scenarios.json, 1 otherwise.
// Usage: node scripts/conformance-verdict.mjs <scenario> <results dir>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, dir] = process.argv.slice(2);
const config = JSON.parse(readFileSync(new URL('./conformance-scenarios.json', import.meta.url), 'utf8'));
const runs = (() => {
  try {
    return readdirSync(dir).filter((d) => d.startsWith(`server-${scenario}-`));
  } catch {
    return [];
  }
})();
if (runs.length !== 1) {
  console.log(`verdict: ${scenario}: ${runs.length} result folders in ${dir}, expected 1 (did the suite crash?)`);
  process.exit(1);
}
const checks = JSON.parse(readFileSync(join(dir, runs[0], 'checks.json'), 'utf8'));
const waived = config.notApplicableChecks[scenario] ?? {};
const failed = checks.filter((c) => c.status === 'FAILURE' || c.status === 'ERROR');
const unexpected = failed.filter((c) => !(c.id in waived));
const passed = checks.filter((c) => c.status === 'SUCCESS').length;
const notApplicable = failed.length - unexpected.length;
// INFO, SKIPPED and WARNING checks: the suite's own notes (a step it could not take against this server).
const other = {};
for (const c of checks)
  if (!['SUCCESS', 'FAILURE', 'ERROR'].includes(c.status)) other[c.status] = (other[c.status] ?? 0) + 1;
const notes = Object.entries(other).map(([status, n]) => `${n} ${status.toLowerCase()}`);
const tested = checks.length - Object.values(other).reduce((a, b) => a + b, 0);
console.log(
  `verdict: ${scenario}: ${passed}/${tested} checks passed` +
    (notApplicable > 0 ? ` (${notApplicable} not applicable)` : '') +
    (unexpected.length > 0 ? `, ${unexpected.length} FAILED` : '') +
    (notes.length > 0 ? `; ${notes.join(', ')}` : ''),
);
for (const c of failed)
  console.log(`  ${c.id in waived ? 'n/a ' : 'FAIL'} ${c.id}: ${c.id in waived ? waived[c.id] : c.description}`);
// A scenario whose every check was skipped tested nothing: it does not pass.
process.exit(unexpected.length > 0 || tested === 0 ? 1 : 0);
