import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The name a crate is used by, from its Cargo.toml: `[lib] name`, else `[package] name`, `-` read
 * as `_` (as Cargo does); undefined when there is neither. A line scanner, not a TOML parser:
 * `name = "…"` on its own line, as `cargo new` and nearly every manifest write it.
 */
export function crateName(manifest: string): string | undefined {
  const names: Record<string, string> = {};
  let section = '';
  for (const raw of manifest.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      section = line.slice(1, line.indexOf(']') < 0 ? undefined : line.indexOf(']')).trim();
      continue;
    }
    if (section !== 'package' && section !== 'lib') continue;
    if (!line.startsWith('name')) continue;
    const rest = line.slice('name'.length).trimStart();
    if (!rest.startsWith('=')) continue;
    const value = rest.slice(1).trim();
    const quote = value[0];
    if (quote !== '"' && quote !== "'") continue;
    const end = value.indexOf(quote, 1);
    if (end > 1) names[section] ??= value.slice(1, end);
  }
  return (names.lib ?? names.package)?.split('-').join('_');
}

/**
 * The library crates among `paths`: each `…/src/lib.rs` whose folder above holds a Cargo.toml
 * naming it. Name → the lib.rs path; a name two crates claim is left out (ambiguous).
 */
export async function libraryCrates(root: string, paths: string[]): Promise<Map<string, string>> {
  const crates = new Map<string, string>();
  const claimed = new Set<string>();
  for (const path of paths) {
    if (path !== 'src/lib.rs' && !path.endsWith('/src/lib.rs')) continue;
    const folder = path.slice(0, -'src/lib.rs'.length);
    const manifest = await readFile(join(root, folder, 'Cargo.toml'), 'utf8').catch(() => undefined);
    const name = manifest === undefined ? undefined : crateName(manifest);
    if (!name) continue;
    if (claimed.has(name)) crates.delete(name);
    else crates.set(name, path);
    claimed.add(name);
  }
  return crates;
}
