import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CODE_NOUNS, CODE_VERBS } from './code-words.js';
import { prng } from './seed.js';

/**
 * bench:analyzer's generated source trees, one per language: `files` files (seeded, so every run
 * writes the same tree) in folders of a package or module each, every file declaring a documented
 * data type, function and service class, and calling one to three earlier files' functions and
 * services through the language's imports. What the analyzer's speed is measured on.
 */
export type GeneratedLanguage = 'typescript' | 'go' | 'rust' | 'java';

const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);

/** A seeded picker and doc-comment writer. */
function words(seed: number) {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const doc = () => `${cap(Array.from({ length: 8 }, () => pick([...CODE_VERBS, ...CODE_NOUNS])).join(' '))}.`;
  /** One to three distinct earlier entries (none for the first). */
  const deps = <T extends { key: string }>(made: T[]): T[] => {
    if (made.length === 0) return [];
    const chosen = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => made[Math.floor(rand() * made.length)]!);
    return [...new Map(chosen.map((d) => [d.key, d])).values()];
  };
  return { pick, doc, deps };
}

async function write(dir: string, path: string, text: string): Promise<void> {
  await mkdir(join(dir, dirname(path)), { recursive: true });
  await writeFile(join(dir, path), text);
}

/** Writes the generated tree of `language` into `dir` (which it creates). */
export async function generateTree(language: GeneratedLanguage, dir: string, files: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (language === 'typescript') return generateTypeScriptTree(dir, files);
  if (language === 'go') return generateGoTree(dir, files);
  if (language === 'rust') return generateRustTree(dir, files);
  return generateJavaTree(dir, files);
}

/** TypeScript: folders of files that import earlier files' functions and classes (extends, new, calls). */
async function generateTypeScriptTree(dir: string, files: number, seed = 5): Promise<void> {
  const { pick, doc, deps } = words(seed);
  const made: Array<{ key: string; fn: string; cls: string }> = [];
  for (let i = 0; i < files; i++) {
    const path = `src/${pick(CODE_NOUNS)}${i % 50}/${pick(CODE_NOUNS)}-${pick(CODE_NOUNS)}-${i}.ts`;
    const fn = `${pick(CODE_VERBS)}${cap(pick(CODE_NOUNS))}${i}`;
    const cls = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${i}`;
    const unique = deps(made);
    const lines: string[] = [];
    for (const d of unique) {
      let rel = join(dirname(path).replace(/[^/]+/g, '..'), d.key).replace(/\.ts$/, '.js');
      if (!rel.startsWith('.')) rel = `./${rel}`;
      lines.push(`import { ${d.fn}, ${d.cls} } from '${rel}';`);
    }
    const calls = unique.map((d) => `${d.fn}(input)`).join(' + ') || '0';
    lines.push(
      '',
      `/** ${doc()} */`,
      `export interface ${cap(pick(CODE_NOUNS))}Shape${i} {`,
      '  id: string;',
      '  size: number;',
      '}',
      '',
      `/** ${doc()} */`,
      `export function ${fn}(input: number): number {`,
      `  return helper${i}(input) + ${calls};`,
      '}',
      '',
      `const helper${i} = (value: number): number => value * ${i};`,
      '',
      `/** ${doc()} */`,
      `export class ${cls}${unique[0] ? ` extends ${unique[0].cls}` : ''} {`,
      `  /** ${doc()} */`,
      `  ${pick(CODE_VERBS)}(input: number): number {`,
      `    return this.run(input) + ${fn}(input);`,
      '  }',
      '',
      '  run(input: number): number {',
      `    return ${unique.map((d) => `new ${d.cls}().run(input)`).join(' + ') || 'input'};`,
      '  }',
      '}',
      '',
    );
    made.push({ key: path, fn, cls });
    await write(dir, path, lines.join('\n'));
  }
}

/**
 * Go: a module of 50 packages (`pkg/<noun><k>`), each file calling functions of its own package
 * directly and of others package-qualified through their import paths; each service embeds an
 * earlier one (EXTENDS) and calls others' `Run` on variables of their type.
 */
async function generateGoTree(dir: string, files: number, seed = 7): Promise<void> {
  const { pick, doc, deps } = words(seed);
  await write(dir, 'go.mod', 'module example.com/gen\n\ngo 1.22\n');
  const made: Array<{ key: string; pkg: string; fn: string; svc: string }> = [];
  for (let i = 0; i < files; i++) {
    const pkg = `${CODE_NOUNS[(i % 50) % CODE_NOUNS.length]}${i % 50}`;
    const fn = `${cap(pick(CODE_VERBS))}${cap(pick(CODE_NOUNS))}${i}`;
    const svc = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${i}`;
    const unique = deps(made);
    const qualified = (d: (typeof made)[number], name: string) => (d.pkg === pkg ? name : `${d.pkg}.${name}`);
    const imports = [...new Set(unique.filter((d) => d.pkg !== pkg).map((d) => d.pkg))];
    const calls = unique.map((d) => `${qualified(d, d.fn)}(input)`).join(' + ') || '0';
    const shape = `${cap(pick(CODE_NOUNS))}Shape${i}`;
    const verb = cap(pick(CODE_VERBS));
    const lines = [`package ${pkg}`, ''];
    if (imports.length) lines.push('import (', ...imports.map((p) => `\t"example.com/gen/pkg/${p}"`), ')', '');
    lines.push(
      `// ${shape}: ${doc()}`,
      `type ${shape} struct {`,
      '\tID   string',
      '\tSize int',
      '}',
      '',
      `// ${fn}: ${doc()}`,
      `func ${fn}(input int) int {`,
      `\treturn helper${i}(input) + ${calls}`,
      '}',
      '',
      `func helper${i}(value int) int {`,
      `\treturn value * ${i}`,
      '}',
      '',
      `// ${svc}: ${doc()}`,
      `type ${svc} struct {`,
      ...(unique[0] ? [`\t${qualified(unique[0], unique[0].svc)}`] : ['\tname string']),
      '}',
      '',
      `// ${verb}: ${doc()}`,
      `func (s *${svc}) ${verb}(input int) int {`,
      `\treturn s.Run(input) + ${fn}(input)`,
      '}',
      '',
      `// Run runs the service.`,
      `func (s *${svc}) Run(input int) int {`,
      ...unique.map((d, k) => `\tvar d${k} ${qualified(d, d.svc)}`),
      `\treturn ${unique.map((_, k) => `d${k}.Run(input)`).join(' + ') || 'input'}`,
      '}',
      '',
    );
    made.push({ key: `${pkg}/${i}`, pkg, fn, svc });
    await write(dir, `pkg/${pkg}/${pick(CODE_NOUNS)}_${pick(CODE_NOUNS)}_${i}.go`, lines.join('\n'));
  }
}

/**
 * Rust: a library crate of 50 modules (`src/<noun><k>/mod.rs`), a file module each, `use crate::…`
 * paths to earlier files' functions and services, `Type::new()` calls, and a trait of the crate
 * root (`Runner`) every service implements.
 */
async function generateRustTree(dir: string, files: number, seed = 11): Promise<void> {
  const { pick, doc, deps } = words(seed);
  await write(dir, 'Cargo.toml', '[package]\nname = "gen"\nversion = "0.1.0"\nedition = "2021"\n');
  const made: Array<{ key: string; module: string; fn: string; svc: string }> = [];
  const modules = new Map<string, string[]>();
  for (let i = 0; i < files; i++) {
    const folder = `${CODE_NOUNS[(i % 50) % CODE_NOUNS.length]}${i % 50}`;
    const file = `${pick(CODE_NOUNS)}_${pick(CODE_NOUNS)}_${i}`;
    const fn = `${pick(CODE_VERBS)}_${pick(CODE_NOUNS)}_${i}`;
    const svc = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${i}`;
    const unique = deps(made);
    const calls = unique.map((d) => `${d.fn}(input)`).join(' + ') || '0';
    const lines = [
      'use crate::Runner;',
      ...unique.map((d) => `use crate::${d.module}::{${d.fn}, ${d.svc}};`),
      '',
      `/// ${doc()}`,
      `pub struct ${cap(pick(CODE_NOUNS))}Shape${i} {`,
      '    pub id: String,',
      '    pub size: i64,',
      '}',
      '',
      `/// ${doc()}`,
      `pub fn ${fn}(input: i64) -> i64 {`,
      `    helper_${i}(input) + ${calls}`,
      '}',
      '',
      `fn helper_${i}(value: i64) -> i64 {`,
      `    value * ${i}`,
      '}',
      '',
      `/// ${doc()}`,
      `pub struct ${svc};`,
      '',
      `impl ${svc} {`,
      '    /// Makes the service.',
      '    pub fn new() -> Self {',
      `        ${svc}`,
      '    }',
      '',
      `    /// ${doc()}`,
      `    pub fn ${pick(CODE_VERBS)}(&self, input: i64) -> i64 {`,
      `        self.run(input) + ${fn}(input)`,
      '    }',
      '}',
      '',
      `impl Runner for ${svc} {`,
      '    fn run(&self, input: i64) -> i64 {',
      `        ${unique.map((d) => `${d.svc}::new().run(input)`).join(' + ') || 'input'}`,
      '    }',
      '}',
      '',
    ];
    made.push({ key: `${folder}::${file}`, module: `${folder}::${file}`, fn, svc });
    modules.set(folder, [...(modules.get(folder) ?? []), file]);
    await write(dir, `src/${folder}/${file}.rs`, lines.join('\n'));
  }
  for (const [folder, list] of modules)
    await write(dir, `src/${folder}/mod.rs`, list.map((f) => `pub mod ${f};\n`).join(''));
  await write(
    dir,
    'src/lib.rs',
    [
      '//! A generated crate.',
      '',
      ...[...modules.keys()].map((m) => `pub mod ${m};`),
      '',
      '/// Something that runs on an input.',
      'pub trait Runner {',
      '    /// Runs on the input.',
      '    fn run(&self, input: i64) -> i64;',
      '}',
      '',
    ].join('\n'),
  );
}

/**
 * Java: 50 packages (`gen.<noun><k>`), a class per file extending an earlier one and implementing
 * `gen.Runner`, importing earlier classes of other packages, calling their static functions and,
 * on `new` instances, their `run`.
 */
async function generateJavaTree(dir: string, files: number, seed = 13): Promise<void> {
  const { pick, doc, deps } = words(seed);
  const base = 'src/main/java/gen';
  await write(
    dir,
    `${base}/Runner.java`,
    [
      'package gen;',
      '',
      '/** Something that runs on an input. */',
      'public interface Runner {',
      '    int run(int input);',
      '}',
      '',
    ].join('\n'),
  );
  const made: Array<{ key: string; pkg: string; fn: string; cls: string }> = [];
  for (let i = 0; i < files; i++) {
    const pkg = `${CODE_NOUNS[(i % 50) % CODE_NOUNS.length]}${i % 50}`;
    const fn = `${pick(CODE_VERBS)}${cap(pick(CODE_NOUNS))}${i}`;
    const cls = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${i}`;
    const unique = deps(made);
    const imports = unique.filter((d) => d.pkg !== pkg).map((d) => `import gen.${d.pkg}.${d.cls};`);
    const calls = unique.map((d) => `${d.cls}.${d.fn}(input)`).join(' + ') || '0';
    const lines = [
      `package gen.${pkg};`,
      '',
      'import gen.Runner;',
      ...imports,
      '',
      `/** ${doc()} */`,
      `public class ${cls}${unique[0] ? ` extends ${unique[0].cls}` : ''} implements Runner {`,
      `    /** ${doc()} */`,
      `    public static final class ${cap(pick(CODE_NOUNS))}Shape {`,
      '        String id;',
      '        int size;',
      '    }',
      '',
      `    /** ${doc()} */`,
      `    public static int ${fn}(int input) {`,
      `        return helper${i}(input) + ${calls};`,
      '    }',
      '',
      `    private static int helper${i}(int value) {`,
      `        return value * ${i};`,
      '    }',
      '',
      `    /** ${doc()} */`,
      `    public int ${pick(CODE_VERBS)}(int input) {`,
      `        return this.run(input) + ${fn}(input);`,
      '    }',
      '',
      '    @Override',
      '    public int run(int input) {',
      ...unique.map((d, k) => `        ${d.cls} d${k} = new ${d.cls}();`),
      `        return ${unique.map((_, k) => `d${k}.run(input)`).join(' + ') || 'input'};`,
      '    }',
      '}',
      '',
    ];
    made.push({ key: cls, pkg, fn, cls });
    await write(dir, `${base}/${pkg}/${cls}.java`, lines.join('\n'));
  }
}
