/**
 * The `meta:` segment of a packet's NODES line (spec "Packet content toggles", DEVLENS_PACKET_META):
 * a node's visibility, kind, signature and return type, read from the first declaration of its
 * stored code — `export async function (url: string, options?: Options) -> Promise<Response>`.
 * TypeScript/JavaScript and Python; other languages get what the same reading finds. Uploaded text:
 * one forward scan of a bounded header, no regex.
 */
import type { PacketNodeRow } from '../../db/queries/graphs/node-reads.js';
import { isJsSpace } from '../text-scan.js';

/** Characters of code read before the declaration (comments, decorators), and of the declaration itself. */
const LEAD_CHARS = 2_000;
const HEADER_CHARS = 600;
const PARAMS_CHARS = 80;
const TYPE_CHARS = 40;

/** Node types whose code is not one declaration. */
const NO_META = new Set(['FILE', 'GHOST', 'THIRD_PARTY', 'ROUTE', 'PACKAGE', 'MODULE']);

const MODIFIERS = new Set([
  'export',
  'default',
  'declare',
  'public',
  'private',
  'protected',
  'static',
  'async',
  'abstract',
  'readonly',
  'override',
  'get',
  'set',
  'accessor',
  'pub',
]);
const DECLARATIONS = new Set([
  'function',
  'function*',
  'class',
  'interface',
  'type',
  'enum',
  'const',
  'let',
  'var',
  'namespace',
  'def',
  'fn',
  'struct',
  'trait',
]);
const VISIBILITIES = new Set(['export', 'public', 'private', 'protected', 'pub']);

export interface NodeMeta {
  visibility: string | null;
  kind: string;
  /** Parameters (functions) or heritage (classes), without the name: the NODES line names it. */
  signature: string | null;
  returnType: string | null;
}

const isWordChar = (c: number) =>
  (c >= 0x61 && c <= 0x7a) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x30 && c <= 0x39) ||
  c === 0x5f /* _ */ ||
  c === 0x24 /* $ */ ||
  c === 0x23 /* # */ ||
  c === 0x2a /* * */ ||
  c > 0x7f;

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

/** Where the declaration starts: after blank lines, line and block comments, and decorator lines. */
function declarationStart(code: string, python: boolean): number {
  const end = Math.min(code.length, LEAD_CHARS);
  let i = 0;
  while (i < end) {
    const c = code.charCodeAt(i);
    if (isJsSpace(c)) {
      i++;
      continue;
    }
    const next = code.charCodeAt(i + 1);
    const lineEnd = () => {
      const nl = code.indexOf('\n', i);
      return nl === -1 ? code.length : nl + 1;
    };
    if (c === 0x2f /* / */ && next === 0x2f) i = lineEnd();
    else if (c === 0x2f && next === 0x2a /* * */) {
      const close = code.indexOf('*/', i + 2);
      i = close === -1 ? code.length : close + 2;
    } else if (c === 0x40 /* @ */ || (python && c === 0x23) /* # */) i = lineEnd();
    else return i;
  }
  return -1;
}

/**
 * The declaration's header, blanks collapsed: from its first word to where its body opens (`{`, a
 * `;`, an arrow's `=>` or Python's closing `:` outside brackets and strings), at most HEADER_CHARS.
 */
function declarationHeader(code: string, from: number, python: boolean): string {
  let out = '';
  let depth = 0; // () and []
  let angle = 0; // <> outside () and []
  let quote = 0;
  let blank = false;
  for (let i = from; i < code.length && out.length < HEADER_CHARS; i++) {
    const c = code.charCodeAt(i);
    if (quote) {
      if (c === 0x5c /* \ */) {
        out += code[i]! + (code[i + 1] ?? '');
        i++;
      } else {
        if (c === quote) quote = 0;
        out += code[i];
      }
      continue;
    }
    if (isJsSpace(c)) {
      blank = out.length > 0;
      continue;
    }
    if (depth === 0 && angle === 0) {
      if (c === 0x7b /* { */ && !python) break;
      if (c === 0x3b /* ; */) break;
      if (c === 0x3d /* = */ && code.charCodeAt(i + 1) === 0x3e /* > */) break; // an arrow: its body is not the header
      if (python && c === 0x3a /* : */ && (i + 1 >= code.length || isJsSpace(code.charCodeAt(i + 1)))) break;
    }
    if (blank) out += ' ';
    blank = false;
    if (c === 0x22 || c === 0x27 || c === 0x60) quote = c;
    else if (c === 0x28 || c === 0x5b) depth++;
    else if ((c === 0x29 || c === 0x5d) && depth > 0) depth--;
    else if (depth === 0 && !python && c === 0x3c /* < */) angle++;
    else if (depth === 0 && !python && c === 0x3e /* > */ && angle > 0) {
      const prev = code.charCodeAt(i - 1);
      if (prev !== 0x3d /* = */ && prev !== 0x2d /* - */) angle--;
    }
    out += code[i];
  }
  return out;
}

/** The end (exclusive) of the bracketed group opening at `from` (`(`, `[` or `<`), or the text's end when unclosed. */
function groupEnd(text: string, from: number): number {
  const open = text.charCodeAt(from);
  const close = open === 0x28 ? 0x29 : open === 0x5b ? 0x5d : 0x3e;
  let depth = 0;
  let quote = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote) {
      if (c === 0x5c) i++;
      else if (c === quote) quote = 0;
      continue;
    }
    if (c === 0x22 || c === 0x27 || c === 0x60) quote = c;
    else if (c === open) depth++;
    else if (c === close && !(close === 0x3e && text.charCodeAt(i - 1) === 0x3d)) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** A return type after `:` (TypeScript) or `->` (Python), up to an arrow or the end. */
function returnTypeAt(rest: string, python: boolean): string | null {
  const t = rest.trimStart();
  let type: string | null = null;
  if (python && t.startsWith('->')) type = t.slice(2);
  else if (!python && t.startsWith(':')) {
    const arrow = t.indexOf('=>');
    type = arrow === -1 ? t.slice(1) : t.slice(1, arrow);
  }
  type = type?.trim() ?? null;
  return type ? clip(type, TYPE_CHARS) : null;
}

const wordAt = (text: string, i: number) => {
  let j = i;
  while (j < text.length && isWordChar(text.charCodeAt(j))) j++;
  return text.slice(i, j);
};
const skipBlank = (text: string, i: number) => (text.charCodeAt(i) === 0x20 ? i + 1 : i);

/** Parameters and return type of a function whose header continues at `i` (generics, then `(…)`). */
function callable(header: string, i: number, python: boolean) {
  let at = skipBlank(header, i);
  // Type parameters are left out: long (`<T extends (...args: any) => Promise<any>>`) and rarely what a reader needs.
  if (header[at] === '<' || (python && header[at] === '[')) at = skipBlank(header, groupEnd(header, at));
  if (header[at] !== '(') return null;
  const end = groupEnd(header, at);
  const closed = header.charCodeAt(end - 1) === 0x29;
  // Blanks where a multi-line parameter list was broken: `( self, url, )` → `(self, url)`.
  let params = header.slice(at, end).replaceAll('( ', '(').replaceAll(', )', ')').replaceAll(' )', ')');
  if (params.length > PARAMS_CHARS) params = `${params.slice(0, PARAMS_CHARS - 2)}…)`;
  else if (!closed) params += '…)';
  return { signature: params, returnType: returnTypeAt(header.slice(end), python) };
}

/**
 * A node's visibility, kind, signature and return type from its code's first declaration; null for
 * nodes that are not one declaration (files, routes, ghosts) or have no code.
 */
export function nodeMeta(row: Pick<PacketNodeRow, 'type' | 'name' | 'file_path' | 'code'>): NodeMeta | null {
  if (!row.code || NO_META.has(row.type)) return null;
  const path = row.file_path.toLowerCase();
  let python = path.endsWith('.py') || path.endsWith('.pyi');
  const start = declarationStart(row.code, python);
  if (start === -1) return null;
  const header = declarationHeader(row.code, start, python);
  const modifiers: string[] = [];
  let declaration: string | null = null;
  let i = 0;
  let name = '';
  while (i < header.length) {
    const word = wordAt(header, i);
    if (!word) break;
    const after = skipBlank(header, i + word.length);
    const follows = header[after];
    // `get(…)`, `type = …`, `static: …`: a modifier's word used as a name.
    const isName = follows === '(' || follows === '<' || follows === '=' || follows === ':' || follows === undefined;
    const always = word === 'function' || word === 'function*' || word === 'def';
    if (!declaration && !isName && MODIFIERS.has(word)) modifiers.push(word);
    else if (!declaration && (always || !isName) && DECLARATIONS.has(word)) declaration = word;
    else {
      name = word;
      i = after;
      break;
    }
    i = after;
  }
  const shortName = (name || row.name.split('.').pop() || '').replace(/^\*/, '');
  python ||= declaration === 'def';

  let kind = declaration;
  let signature: string | null = null;
  let returnType: string | null = null;
  if (declaration === 'class' || declaration === 'interface' || declaration === 'struct' || declaration === 'trait') {
    const rest = header.slice(i).trim();
    signature = rest ? clip(rest, PARAMS_CHARS) : null;
  } else if (declaration === 'type' || declaration === 'enum' || declaration === 'namespace') {
    signature = null;
  } else if (header[i] === '=' && header[i + 1] !== '=') {
    // `name = (…) => …`, `const name = async function (…)`: an arrow or a function expression.
    let at = skipBlank(header, i + 1);
    const isAsync = wordAt(header, at) === 'async';
    if (isAsync) at = skipBlank(header, at + 5);
    const fn = wordAt(header, at);
    if (fn === 'function' || fn === 'function*') at = skipBlank(header, at + fn.length);
    const f = callable(header, at, python);
    if (f) {
      kind = `${isAsync ? 'async ' : ''}${fn.startsWith('function') ? fn : 'arrow'}`;
      ({ signature, returnType } = f);
    } else if (!kind) return null; // `name = value`: not a declaration the packet can describe
  } else {
    const f = callable(header, i, python);
    if (f) ({ signature, returnType } = f);
    kind ??= shortName === 'constructor' || shortName === '__init__' ? 'constructor' : 'method';
  }
  if (!kind) return null;
  if (kind === 'method' && (modifiers.includes('get') || modifiers.includes('set')))
    kind = modifiers.includes('get') ? 'getter' : 'setter';
  const shown = modifiers.filter(
    (m) => !VISIBILITIES.has(m) && m !== 'default' && m !== 'declare' && m !== 'get' && m !== 'set',
  );
  if (shown.length) kind = `${shown.join(' ')} ${kind}`;

  let visibility: string | null = modifiers.find((m) => VISIBILITIES.has(m)) ?? null;
  if (visibility === 'pub') visibility = 'public';
  if (python) {
    visibility =
      shortName.startsWith('__') && shortName.endsWith('__')
        ? 'public'
        : shortName.startsWith('_')
          ? 'private'
          : 'public';
  } else if (!visibility) {
    if (shortName.startsWith('#')) visibility = 'private';
    else if (row.type === 'METHOD' || (!declaration && row.name.includes('.'))) visibility = 'public';
    else if (declaration) visibility = 'module';
  }
  return { visibility, kind, signature, returnType };
}

/** The segment's text: `export async function (url: string) -> Promise<Response>`. */
export function metaText(meta: NodeMeta): string {
  return [meta.visibility, meta.kind, meta.signature, meta.returnType && `-> ${meta.returnType}`]
    .filter(Boolean)
    .join(' ');
}
