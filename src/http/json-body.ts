import type { FastifyInstance } from 'fastify';
import { validationError } from '../errors.js';

/** Deepest nesting a JSON body may have: inputs here are a few levels deep (graph uploads allow the same). */
export const MAX_BODY_DEPTH = 64;
/**
 * Most values (strings, numbers, objects, arrays… counted as they start) a JSON body may hold. No
 * operation takes more than a few thousand (keywords ≤ 50, a JSON-RPC batch of tools/call, the
 * analyzer's 5,000 code hashes to POST /graphs/summaries); a big memory is one long string. Past
 * this, parsing and validating cost grows with the body while it can only be refused: 2 MB of
 * `[[…]]` or of unknown fields took ~0.5 s of CPU each.
 */
export const MAX_BODY_VALUES = 10_000;

/** A refusal: the field it concerns (a dotted path, `(body)` for the whole) and why. */
export interface ShapeProblem {
  field: string;
  message: string;
}

/** Whether the next character after `i`, past white space, starts a number, `true`, `false` or `null`. */
function scalarFollows(text: string, i: number): boolean {
  let j = i + 1;
  let n = text.charCodeAt(j);
  while (n === 0x20 || n === 0x0a || n === 0x0d || n === 0x09) n = text.charCodeAt(++j);
  return j < text.length && n !== 0x22 && n !== 0x7b && n !== 0x5b && n !== 0x5d && n !== 0x7d;
}

/** Path segments named in a refusal at most (the rest is `…`). */
const MAX_PATH_SEGMENTS = 6;

/**
 * Why a JSON text is refused before it is parsed, or null: nesting past `maxDepth` (naming the
 * field where it happens: `keywords.0.0…`), or more than `maxValues` values (`(body)`). One pass
 * over the text, stopping at the first excess; strings (and their escapes) are skipped whole. It
 * does not validate the JSON: the parser does that next.
 */
export function jsonShapeProblem(
  text: string,
  maxDepth = MAX_BODY_DEPTH,
  maxValues = MAX_BODY_VALUES,
): ShapeProblem | null {
  // The containers open at this point, each with the key (object) or index (array) being read.
  const path: Array<{ object: boolean; key: string | number }> = [];
  let expectKey = false;
  let values = 0;
  const tooMany = (): ShapeProblem => ({
    field: '(body)',
    message: `the JSON body holds more than ${maxValues} values`,
  });
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i + 1;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      const top = path[path.length - 1];
      if (top?.object && expectKey) {
        top.key = text.slice(start, Math.min(i, start + 100));
        expectKey = false;
      }
      if (++values > maxValues) return tooMany();
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (path.length >= maxDepth) {
        const names = path.slice(0, MAX_PATH_SEGMENTS).map((p) => String(p.key) || '""');
        const field = names.join('.') + (path.length > MAX_PATH_SEGMENTS ? '…' : '');
        return { field: field || '(body)', message: `nested more than ${maxDepth} levels deep` };
      }
      path.push({ object: c === 0x7b, key: c === 0x7b ? '' : 0 });
      expectKey = c === 0x7b;
      if (++values > maxValues) return tooMany();
      if (c === 0x5b && scalarFollows(text, i) && ++values > maxValues) return tooMany();
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      path.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */ || c === 0x3a /* : */) {
      const top = path[path.length - 1];
      if (c === 0x2c && top) {
        if (top.object) expectKey = true;
        else top.key = (top.key as number) + 1;
      }
      // The next value, if it is a scalar, is counted here (strings and containers count themselves).
      if (!expectKey && scalarFollows(text, i) && ++values > maxValues) return tooMany();
    }
  }
  return null;
}

/**
 * JSON bodies: refused with 400 VALIDATION_ERROR when nested (naming the field) or numerous
 * (`(body)`) past the bounds above, before they are parsed or validated; otherwise Fastify's own parser (which also
 * refuses `__proto__` and `constructor.prototype` keys). The graph upload route streams its body
 * and has bounds of its own (upload-graph.ts).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const problem = jsonShapeProblem(text);
    if (problem) {
      done(validationError([problem]), undefined);
      return;
    }
    void parse(request, text, done);
  });
}
