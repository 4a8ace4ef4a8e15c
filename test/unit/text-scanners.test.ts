import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { checkSync } from 'recheck';
import ts from 'typescript';
import { collapsedPrefix, microSummary, plainTextPrefix, snippetLines } from '../../src/domain/graphs/packet-text.js';
import {
  docText,
  identifierText,
  identifierWords,
  nameDocument,
  pathDocument,
} from '../../src/domain/graphs/search-document.js';
import { tidyDoc } from '../../src/analyzer/doc-text.js';
import { mapYielding } from '../../src/domain/map-yielding.js';

/**
 * Issue 19, defect 3, "regular expressions with quadratic time on the event loop", the parts that
 * need no service: every regex in src/ is linear by a ReDoS checker, the scanners that replaced
 * backtracking regexes match what those regexes matched, and a batch of nodes is built in slices.
 * Over HTTP, with pathological text in every field: test/hostile-text.test.ts. Deterministic: fixed seeds.
 */

const SEED = 20_261_219;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// ---------------------------------------------------------------------------------------------
// Every regex in src/ is linear.

/** Regexes that read only the operator's own text (environment, command line), never a client's. */
const TRUSTED: Record<string, string> = {
  'src/config.ts': 'environment variables of the operator',
  'src/commands/': 'command-line arguments and local files of the user running the CLI',
};

interface FoundRegex {
  where: string;
  source: string;
  flags: string;
}

function regexesInSrc(): { regexes: FoundRegex[]; dynamic: string[] } {
  const regexes: FoundRegex[] = [];
  const dynamic: string[] = [];
  const paths = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((p) =>
    /\.[cm]?[jt]s$/.test(p),
  );
  for (const path of paths.map((p) => `src/${p}`)) {
    const file = ts.createSourceFile(path, readFileSync(join(ROOT, path), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      const where = `${path}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}`;
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(file);
        const slash = text.lastIndexOf('/');
        regexes.push({ where, source: text.slice(1, slash), flags: text.slice(slash + 1) });
      } else if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        node.expression.getText(file) === 'RegExp'
      ) {
        dynamic.push(where);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return { regexes, dynamic };
}

describe('every regex in src/ runs in linear time (recheck)', () => {
  test('no regex reading client or stored text can backtrack super-linearly', () => {
    const { regexes, dynamic } = regexesInSrc();
    assert.ok(regexes.length > 50, `found ${regexes.length} regexes: the scan missed src/`);
    assert.deepEqual(dynamic, [], 'a RegExp built at run time cannot be checked here: use a literal');
    const vulnerable: string[] = [];
    for (const r of regexes) {
      if (Object.keys(TRUSTED).some((prefix) => r.where.startsWith(prefix))) continue;
      const result = checkSync(r.source, r.flags, { timeout: 10_000, randomSeed: SEED });
      if (result.status !== 'safe') {
        const attack =
          result.status === 'vulnerable' ? ` (${result.complexity.type}; attack ${result.attack.pattern})` : '';
        vulnerable.push(`${r.where} /${r.source}/${r.flags}: ${result.status}${attack}`);
      }
    }
    assert.deepEqual(vulnerable, []);
  });
});

// ---------------------------------------------------------------------------------------------
// The scanners give what the regexes they replaced gave (on inputs small enough for those).

const OLD = {
  identifierWords: (identifier: string) =>
    identifier
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .replace(/([A-Za-z])(\d)/g, '$1 $2')
      .replace(/(\d)([A-Za-z])/g, '$1 $2')
      .replace(/[^A-Za-z0-9]+/g, ' ')
      .trim()
      .toLowerCase(),
  docText(code: string): string {
    const parts: string[] = [];
    for (const pattern of [
      /\/\*\*?([\s\S]*?)\*\//g,
      /(?:^|[^:])\/\/(.*)$/gm,
      /^\s*#(?!!)(.*)$/gm,
      /("""|''')([\s\S]*?)\1/g,
    ]) {
      for (const m of code.matchAll(pattern))
        parts.push((m[m.length - 1] ?? '').replace(/^\s*\*+/gm, ' ').replace(/@\w+/g, ' '));
    }
    return parts.join(' ').replace(/\s+/g, ' ').trim().slice(0, 4000);
  },
  microSummary(row: { business_summary: string | null; technical_summary: string | null }): string | null {
    const text = (row.business_summary ?? row.technical_summary ?? '')
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (!text) return null;
    const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
    return sentence.length > 120 ? `${sentence.slice(0, 119)}…` : sentence;
  },
  snippets(code: string | null, startLine: number, words: string[], limit: number): string[] {
    if (!code || words.length === 0) return [];
    const found: string[] = [];
    const lines = code.split('\n');
    for (let i = 0; i < lines.length && found.length < limit; i++) {
      const lower = lines[i]!.toLowerCase();
      if (words.some((w) => lower.includes(w))) found.push(`  L${startLine + i}: ${lines[i]!.trim().slice(0, 160)}`);
    }
    return found;
  },
  tidyDoc(lines: string[]): string {
    const text = lines
      .map((l) => l.replace(/\s+$/, ''))
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    return text.length > 4000 ? `${text.slice(0, 3999)}…` : text;
  },
};

/** Text made of the pieces these functions look for, in any order. */
const pieces = (list: string[], maxLength: number) =>
  fc.array(fc.constantFrom(...list), { maxLength }).map((a) => a.join(''));
const CODE_PIECES = [
  '/*',
  '*/',
  '/**',
  '*',
  '//',
  ':',
  '#',
  '#!',
  '"""',
  "'''",
  '\n',
  '\r\n',
  '\r',
  '\u2028',
  ' ',
  '\t',
  '\u00a0',
  '* ',
  '@param',
  '@',
  'x',
  'fooBar',
  'HTTPServer',
  'ABCd',
  'AbC',
  'a1B',
  'get_user.byId',
  '$x',
  '_',
];
const HTML_PIECES = [
  '<',
  '>',
  '<b>',
  '</p>',
  '.',
  '!',
  '?',
  ' ',
  '\n',
  '\t',
  '\u3000',
  'a',
  'B',
  'é',
  'word',
  'Sentence one.',
  'x'.repeat(50),
];
const runs = (list: string[]) =>
  fc
    .tuple(pieces(list, 10), fc.constantFrom(...list), fc.integer({ min: 0, max: 300 }), pieces(list, 10))
    .map(([a, unit, n, b]) => a + unit.repeat(n) + b);
const property = { seed: SEED, numRuns: 3_000 };

describe('the scanners match the regexes they replace', () => {
  test('search documents: identifier words, name and path documents, doc text, identifiers', () => {
    for (const arb of [pieces(CODE_PIECES, 40), runs(CODE_PIECES), fc.string({ maxLength: 60 })]) {
      fc.assert(
        fc.property(arb, (s) => identifierWords(s) === OLD.identifierWords(s)),
        property,
      );
      fc.assert(
        fc.property(arb, (s) => pathDocument(s) === OLD.identifierWords(s)),
        property,
      );
      fc.assert(
        fc.property(arb, (s) => docText(s) === OLD.docText(s)),
        property,
      );
      fc.assert(
        fc.property(arb, (s) => {
          const whole = s.toLowerCase().replace(/\s+/g, ' ');
          const expected = [
            ...new Set([
              whole,
              whole
                .split(/[^a-z0-9_$]+/)
                .filter(Boolean)
                .join(' '),
              OLD.identifierWords(s),
            ]),
          ]
            .filter(Boolean)
            .join(' ');
          return nameDocument(s) === expected;
        }),
        property,
      );
    }
    // Long doc text: the scan stops once MAX_CODE_TEXT is filled, with the same answer.
    const long = fc.array(
      fc.tuple(fc.constantFrom('/* ', '// ', '# ', '"""'), fc.string({ minLength: 1, maxLength: 400 })),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(long, (comments) => {
        const code = comments
          .map(([open, body]) => `${open}${body}${open === '/* ' ? ' */' : open === '"""' ? '"""' : ''}\n`)
          .join('');
        return docText(code) === OLD.docText(code);
      }),
      { seed: SEED, numRuns: 300 },
    );
    assert.equal(identifierText('const HTTPServer = getUser_byId(x2y)'), 'const http server get user by id x 2 y');
  });

  test('packet text: one-line meanings, snippet lines, security notes', () => {
    for (const arb of [pieces(HTML_PIECES, 40), runs(HTML_PIECES), fc.string({ maxLength: 200 })]) {
      fc.assert(
        fc.property(
          arb,
          fc.option(arb, { nil: null }),
          (b, t) =>
            microSummary({ business_summary: b, technical_summary: t }) ===
            OLD.microSummary({ business_summary: b, technical_summary: t }),
        ),
        property,
      );
      fc.assert(
        fc.property(
          fc.option(arb, { nil: null }),
          (t) =>
            microSummary({ business_summary: null, technical_summary: t }) ===
            OLD.microSummary({ business_summary: null, technical_summary: t }),
        ),
        property,
      );
      fc.assert(
        fc.property(arb, fc.nat(250), (s, n) => collapsedPrefix(s, n) === s.replace(/\s+/g, ' ').slice(0, n)),
        property,
      );
      fc.assert(
        fc.property(
          arb,
          fc.nat(250),
          (s, n) =>
            plainTextPrefix(s, n) ===
            s
              .replace(/<[^>]*>/g, '')
              .replace(/\s+/g, ' ')
              .trim()
              .slice(0, n),
        ),
        property,
      );
      fc.assert(
        fc.property(
          fc.option(arb, { nil: null }),
          fc.array(fc.constantFrom('word', 'b>', 'sentence', 'xxx'), { maxLength: 3 }),
          fc.nat(3),
          fc.nat(100),
          (code, words, limit, start) =>
            assert.deepEqual(
              snippetLines({ code, start_line: start }, words, limit),
              OLD.snippets(code, start, words, limit),
            ),
        ),
        property,
      );
    }
  });

  test('analyzer doc text: trailing blanks', () => {
    const lines = fc.array(pieces([' ', '\t', '\u00a0', '\r', 'a', 'b c', '\u2028', '*'], 30), { maxLength: 8 });
    fc.assert(
      fc.property(lines, (l) => tidyDoc(l) === OLD.tidyDoc(l)),
      property,
    );
  });
});

describe('a batch of nodes is built in slices', () => {
  test('mapYielding lets other work run between items once a slice is used up, and keeps order and errors', async () => {
    let built = 0;
    const seen: number[] = []; // how many items were built each time the other work ran
    const other = () => {
      seen.push(built);
      if (built < 5) setImmediate(other);
    };
    setImmediate(other);
    assert.deepEqual(await mapYielding([1, 2, 3, 4, 5], (v) => (built++, v * 2), 0), [2, 4, 6, 8, 10]);
    for (const n of [1, 2, 3, 4]) assert.ok(seen.includes(n), `nothing else ran after item ${n}: ${seen}`);
    const failing = (v: number) => {
      if (v === 2) throw new Error('bad item');
      return v;
    };
    await assert.rejects(mapYielding([1, 2, 3], failing, 0), /bad item/);
  });
});
