import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import fc from 'fast-check';
import { ERROR_CODES } from '../src/errors.js';
import { jsonShapeProblem } from '../src/http/json-body.js';
import { operations, tools } from '../src/operations/index.js';
import type { AnyOperation, HttpRoute } from '../src/operations/operation.js';
import { assertErrorBody, describeValue } from './helpers/assertions.js';
import { backends, type TestDb } from './helpers/backends.js';
import { initializeBody, rawInitialize, rawMcp } from './helpers/mcp-raw.js';
import { rowCounts } from './helpers/rows.js';
import { rest, withServer, type TestServer, MCP_HEADERS } from './helpers/server.js';

/**
 * Issue 6, "hostile input never hurts the service": property-based fuzzing of every operation in the
 * registry (over MCP, the tool mirror and its resource routes), of raw JSON bodies, of raw JSON-RPC
 * at /mcp and of graph uploads. Whatever comes in: never a 5xx, never an internal or database error
 * in a tool result, every 4xx a catalogue error body (validation errors naming their field), and a
 * rejected request writes nothing. Deterministic: fixed seed, bounded runs (HOSTILE_RUNS to change).
 */

const SEED = 20_260_606;
const RUNS = Number(process.env.HOSTILE_RUNS ?? 24);
const fcOptions = (runs = RUNS) => ({ seed: SEED, numRuns: runs, verbose: 1 as const });

// ---------------------------------------------------------------------------------------------
// The input schemas, read through zod 4's definitions (no zod internals beyond `_zod.def`).

type Schema = { _zod: { def: any }; [key: string]: any };

/** The schema that says what a value is, under optional/default/nullable wrappers and transforms. */
function inner(schema: Schema): Schema {
  let s = schema;
  for (;;) {
    const def = s._zod.def;
    if (
      def.type === 'optional' ||
      def.type === 'default' ||
      def.type === 'nullable' ||
      def.type === 'prefault' ||
      def.type === 'readonly'
    )
      s = def.innerType;
    else if (def.type === 'pipe') s = def.in;
    else return s;
  }
}

const kindOf = (schema: Schema): string => inner(schema)._zod.def.type as string;
const isOptional = (schema: Schema) => schema._zod.def.type === 'optional' || schema._zod.def.type === 'default';
const enumValues = (schema: Schema): string[] => Object.values(inner(schema)._zod.def.entries ?? {}) as string[];
const stringMax = (schema: Schema): number | null => (inner(schema).maxLength as number | null | undefined) ?? null;
const arrayMax = (schema: Schema): number | null => {
  const check = (inner(schema)._zod.def.checks ?? []).find((c: Schema) => c._zod.def.check === 'max_length');
  return check ? (check._zod.def.maximum as number) : null;
};
const arrayMin = (schema: Schema): number => {
  const check = (inner(schema)._zod.def.checks ?? []).find((c: Schema) => c._zod.def.check === 'min_length');
  return check ? (check._zod.def.minimum as number) : 0;
};
const arrayElement = (schema: Schema): Schema => inner(schema)._zod.def.element;
const numberRange = (schema: Schema) => {
  const s = inner(schema);
  return { min: s.minValue as number, max: s.maxValue as number, int: Boolean(s.isInt) };
};
const shapeOf = (op: AnyOperation) => op.input.shape as Record<string, Schema>;

/** What is wrong with a field's declared bounds (every string and array has a max length, every number a range). */
function unbounded(schema: Schema, path: string): string[] {
  switch (kindOf(schema)) {
    case 'string':
      return stringMax(schema) === null ? [`${path}: a string without a max length`] : [];
    case 'number': {
      const { min, max } = numberRange(schema);
      return Math.abs(min) >= Number.MAX_SAFE_INTEGER || Math.abs(max) >= Number.MAX_SAFE_INTEGER
        ? [`${path}: a number without a range`]
        : [];
    }
    case 'array':
      return [
        ...(arrayMax(schema) === null ? [`${path}: an array without a max length`] : []),
        ...unbounded(arrayElement(schema), `${path}[]`),
      ];
    case 'object':
      return Object.entries(inner(schema)._zod.def.shape as Record<string, Schema>).flatMap(([k, v]) =>
        unbounded(v, `${path}.${k}`),
      );
    case 'enum':
    case 'boolean':
    case 'literal':
      return [];
    default:
      return [`${path}: an input of kind ${kindOf(schema)} the fuzzer does not know`];
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile values. Each carries `reject`: true when any correct service must refuse it for the field.

interface Hostile {
  value: unknown;
  reject: boolean;
  label: string;
}

const LONE_SURROGATES = ['\uD800', '\uDFFF', 'a\uD83D', '\uDE00b', '\uDC00\uD800', 'ok\uDBFF'];
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NULS = ['\0', 'a\0b', '\0\0\0', 'x\u0000'];
const SQL_META = [
  "'; drop table semantic_memory; --",
  "' or '1'='1",
  '%',
  '_',
  '%_%',
  '\\',
  "\\'",
  '\\%\\_',
  '$$; select pg_sleep(5); $$',
  "E'\\x00'",
  '"; delete from micro_tasks; --',
  '*/ select 1 /*',
];
const TSQUERY = [
  '!',
  '&',
  '|',
  ':*',
  '<->',
  '<2>',
  '(',
  ')',
  '!(a & b) | c:*',
  "'a' & 'b'",
  'a:A',
  '&&&|||',
  '!!!',
  ':*:*',
  "\\:'",
  '( ) & | !',
  'a <-> <-> b',
];
const TRAVERSAL = [
  '../../etc/passwd',
  '%2e%2e/',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  '....//....//',
  'file:///etc/passwd',
  '.',
  '..',
  '/',
  '~root',
];
const UNICODE = [
  '\u202Eevil',
  'e\u0301',
  '\u200B',
  '\uFEFF',
  '\uFFFF',
  '\uFFFE',
  '𝕏',
  '👩‍💻',
  '\u2028\u2029',
  'İ',
  'ß',
  '\u3000x\u3000',
  '\t\n\r',
  '  ',
  '',
  'ﷺ',
  '\u0085',
];
const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isAdmin',
  '',
  ' ',
  'a.b',
  '$where',
  'x\0',
  '\uD800',
];
const NUMBERS = [
  1e308,
  -1e308,
  -1,
  0,
  0.5,
  -0.5,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 31,
  2 ** 63,
  5e-324,
  1e21,
];
/** Date-times at and past the edges of what Postgres stores (4713 BC to 294276 AD), and absurd precision. */
const TIMESTAMPS = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999999Z',
  '2026-02-29T00:00:00Z',
  '2026-01-01T00:00:00+23:59',
  '2026-01-01T24:00:00Z',
  `2026-01-01T00:00:00.${'9'.repeat(3_000)}Z`,
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00Z',
];
const NAN_ISH = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e308',
  '-0',
  '0x10',
  ' 5 ',
  '1_000',
  '5',
  'true',
  'null',
  '[]',
  '{}',
];

/** JSON with an own `__proto__` key (an object literal would set the prototype instead). */
const protoObject = () => JSON.parse('{"__proto__": {"polluted": true, "isAdmin": true}}') as object;
const constructorObject = () => JSON.parse('{"constructor": {"prototype": {"polluted": true}}}') as object;
function nested(depth: number, kind: 'array' | 'object'): unknown {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

/** Values of the wrong JSON type for a field of `kind` (every one must be refused). */
function wrongTypes(kind: string): fc.Arbitrary<Hostile> {
  const candidates: Array<[string, () => unknown]> = [
    ['null', () => null],
    ['true', () => true],
    ['false', () => false],
    ['number', () => 42],
    ['string', () => 'text'],
    ['empty array', () => []],
    ['array', () => [1, 'a', null]],
    ['empty object', () => ({})],
    ['object', () => ({ a: 1, b: [2] })],
    ['__proto__ object', protoObject],
    ['constructor object', constructorObject],
    ['deep arrays', () => nested(2_000, 'array')],
    ['deep objects', () => nested(2_000, 'object')],
  ];
  const wrong = candidates.filter(([label]) => {
    if (kind === 'string' || kind === 'enum') return label !== 'string';
    if (kind === 'number') return label !== 'number';
    if (kind === 'boolean') return label !== 'true' && label !== 'false';
    if (kind === 'array') return label !== 'empty array' && label !== 'array';
    return true;
  });
  return fc
    .constantFrom(...wrong)
    .map(([label, make]) => ({ value: make(), reject: true, label: `wrong type: ${label}` }));
}

/** Texts of `n` characters, made once per length. */
function memo(make: (n: number) => string): (n: number) => string {
  const made = new Map<number, string>();
  return (n) => {
    if (!made.has(n)) made.set(n, make(n));
    return made.get(n)!;
  };
}

/** `n` characters of distinct lowercase words ("baaa baab …"): one full-text entry each. */
const distinctWords = memo((n) => {
  const parts: string[] = [];
  for (let i = 26 ** 3, length = 0; length < n; i++) {
    let word = '';
    for (let k = i; k > 0; k = Math.floor(k / 26)) word = String.fromCharCode(97 + (k % 26)) + word;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ').slice(0, n).trim().padEnd(n, 'x');
});

/** `n` pseudo-random CJK characters: three UTF-8 bytes each, incompressible. */
const randomCjk = memo((n) =>
  Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919 + 104_729) % 20_000))).join(''),
);

/** Strings: metacharacters and oddities (refused only where the field says so), and the always-refused NUL and lone surrogates. */
function hostileStrings(schema: Schema): fc.Arbitrary<Hostile> {
  const kind = kindOf(schema);
  const max = kind === 'string' ? stringMax(schema) : null;
  const allowed = kind === 'enum' ? enumValues(schema) : null;
  /** A plain string is refused by a non-string field, by an enum it is not in, and by a string field when too long. */
  const judge = (s: string) =>
    (kind !== 'string' && kind !== 'enum') ||
    (allowed !== null && !allowed.includes(s)) ||
    (max !== null && s.length > max);
  const odd = fc
    .constantFrom(...SQL_META, ...TSQUERY, ...TRAVERSAL, ...UNICODE, ...NAN_ISH, ...TIMESTAMPS)
    .map((s) => ({ value: s, reject: judge(s), label: 'metacharacters' }));
  const mixed = fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(...SQL_META, ...TSQUERY, ...UNICODE),
      fc.string({ unit: 'binary', maxLength: 8 }),
    )
    .map(([a, b, c]) => a + b + c)
    .map((s) => ({ value: s, reject: judge(s), label: 'mixed text' }));
  const broken = fc
    .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(...NULS, ...LONE_SURROGATES), fc.string({ maxLength: 6 }))
    .map(([a, b, c]) => ({ value: a + b + c, reject: true, label: b.includes('\0') ? 'NUL byte' : 'lone surrogate' }));
  // Exactly as long as the field allows, of text the database cannot compress or fold: a full-text
  // document of ever new words, or pseudo-random CJK (btree entries hold at most ~2.7 kB).
  const fill = fc
    .constantFrom(['distinct words', distinctWords] as const, ['random CJK', randomCjk] as const)
    .map(([what, make]) => ({
      value: make(max ?? 10_000),
      reject: kind !== 'string',
      label: `${max ?? 10_000} characters of ${what}`,
    }));
  const size = max ?? 100_000;
  const huge = fc.constantFrom('x', 'é', '𝕏', "'", '%', '\\').map((unit) => ({
    value: unit.repeat(Math.ceil((size + 1) / unit.length)),
    reject: kind !== 'string' || max !== null,
    label: `huge string (${size + 1}+ characters)`,
  }));
  return fc.oneof(odd, mixed, broken, huge, fill);
}

function hostileNumbers(schema: Schema): fc.Arbitrary<Hostile> {
  const kind = kindOf(schema);
  const range = kind === 'number' ? numberRange(schema) : null;
  const judge = (n: number) =>
    range === null || !(range.int ? Number.isSafeInteger(n) : Number.isFinite(n)) || n < range.min || n > range.max;
  const edges = range
    ? [range.min - 1, range.max + 1, range.min - 0.5, range.max + 0.5].filter(
        (n) => Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER,
      )
    : [];
  return fc
    .oneof(fc.constantFrom(...NUMBERS, ...edges), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer())
    .map((n) => ({ value: Object.is(n, -0) ? 0 : n, reject: judge(Object.is(n, -0) ? 0 : n), label: 'number' }));
}

/** Arrays of hostile elements, and arrays longer than the field allows. */
function hostileArrays(schema: Schema, depth: number): fc.Arbitrary<Hostile> {
  if (kindOf(schema) !== 'array') return fc.constant({ value: [[['x']]], reject: true, label: 'nested arrays' });
  const element = arrayElement(schema);
  const max = arrayMax(schema);
  const elements = fc
    .array(depth > 0 ? hostileFor(element, depth - 1) : wrongTypes(kindOf(element)), { minLength: 1, maxLength: 4 })
    .map((items) => ({
      value: items.map((i) => i.value),
      reject: items.some((i) => i.reject),
      label: `array of ${items.map((i) => i.label).join(', ')}`,
    }));
  const tooLong = fc.constant({
    value: Array.from({ length: (max ?? 10_000) + 1 }, (_, i) => baseValue(element, `item${i}`)),
    reject: max !== null,
    label: `array of ${(max ?? 10_000) + 1} items`,
  });
  return fc.oneof(elements, tooLong);
}

/** Any hostile value for a field, of every category. */
function hostileFor(schema: Schema, depth = 1): fc.Arbitrary<Hostile> {
  const kind = kindOf(schema);
  const parts: Array<fc.Arbitrary<Hostile>> = [wrongTypes(kind), hostileStrings(schema), hostileNumbers(schema)];
  if (kind === 'array') parts.push(hostileArrays(schema, depth));
  return fc.oneof(...parts);
}

// ---------------------------------------------------------------------------------------------
// Valid-ish base arguments: the field's own kind, or a known good value where the name says what it is.

let known: Record<string, unknown> = {};

function baseValue(schema: Schema, field: string): unknown {
  if (Object.hasOwn(known, field)) return known[field];
  switch (kindOf(schema)) {
    case 'enum':
      return enumValues(schema)[0];
    case 'number':
      return Math.max(numberRange(schema).min, 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: arrayMin(schema) }, () => baseValue(arrayElement(schema), `${field}[]`));
    default:
      return 'fuzz';
  }
}

function baseArgs(op: AnyOperation): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(shapeOf(op))) {
    if (isOptional(schema) && !Object.hasOwn(known, field)) continue;
    args[field] = baseValue(schema, field);
  }
  return args;
}

interface Case {
  /** The field replaced, or the unknown field added. */
  field: string;
  hostile: Hostile;
  extra: boolean;
}

function caseFor(op: AnyOperation): fc.Arbitrary<Case> {
  const shape = shapeOf(op);
  const fields = Object.keys(shape).map((field) =>
    hostileFor(shape[field]!).map((hostile): Case => ({ field, hostile, extra: false })),
  );
  const unknownKey = fc
    .tuple(
      fc.constantFrom(...PROTO_KEYS.filter((k) => !Object.hasOwn(shape, k))),
      fc.oneof(
        fc.constant('x' as unknown),
        fc.constant(protoObject()),
        wrongTypes('any').map((h) => h.value),
      ),
    )
    .map(([field, value]): Case => ({ field, hostile: { value, reject: true, label: 'unknown field' }, extra: true }));
  return fc.oneof(...fields, unknownKey);
}

/** The base arguments with the case applied; a `__proto__` key is made an own property, as JSON.parse would. */
function argsFor(op: AnyOperation, c: Case): Record<string, unknown> {
  const args = baseArgs(op);
  Object.defineProperty(args, c.field, {
    value: c.hostile.value,
    enumerable: true,
    configurable: true,
    writable: true,
  });
  return args;
}

// ---------------------------------------------------------------------------------------------
// Sending a case: REST (tool mirror and resource routes) and MCP.

/** Percent-encodes any string, lone surrogates included (as their WTF-8 bytes, which encodeURIComponent refuses). */
function encodePart(value: string): string {
  let out = '';
  for (const ch of value) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** A value as query-string or path text: strings as they are, everything else as JSON. */
const asText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** Longest URL the test sends: past ~16 KB of headers Node's parser answers 431 (clientErrorHandler; tested in auth.test.ts). */
const MAX_URL = 8_000;

const SERVER_FAULT_CODES = Object.entries(ERROR_CODES)
  .filter(([, v]) => v.status >= 500)
  .map(([k]) => k);

/** How an error names a field: as it is, or quoted when it is empty. */
const fieldName = (field: string) => (field === '' ? '""' : field);

/** An issue for `field` (or a part of it: `keywords.2`) in the body, named in the message too. */
function namesField(body: any, field: string): boolean {
  const name = fieldName(field);
  const issues: Array<{ field: string }> = body?.error?.details?.issues ?? [];
  const hit = issues.some((i) => i.field === name || i.field.startsWith(`${name}.`));
  return hit && String(body.error.message).includes(name);
}

/** A body past the JSON bounds (src/http/json-body.ts): more values than allowed, or nested deeper, refused before it is parsed. */
function refusedWhole(value: unknown): boolean {
  return typeof value === 'object' && value !== null && jsonShapeProblem(JSON.stringify(value)) !== null;
}

/**
 * JSON holding a `__proto__` key, or `constructor.prototype`, anywhere: Fastify's parser refuses the
 * whole body (prototype poisoning), so the refusal names the body rather than the field; so is a
 * body past the JSON bounds (refusedWhole).
 */
function poisoned(value: unknown, depth = 0): boolean {
  if (depth === 0 && refusedWhole(value)) return true;
  if (typeof value !== 'object' || value === null || depth > 50) return false;
  if (Array.isArray(value)) return value.some((v) => poisoned(v, depth + 1));
  if (Object.hasOwn(value, '__proto__')) return true;
  const ctor = Object.hasOwn(value, 'constructor') ? (value as { constructor: unknown }).constructor : undefined;
  if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return true;
  return Object.values(value).some((v) => poisoned(v, depth + 1));
}

interface RestCall {
  label: string;
  method: string;
  path: string;
  body?: unknown;
  /** Fields sent in a JSON body (their values keep their JSON type). */
  bodyFields: Set<string>;
  /** Fields sent in the query string (their values become text). */
  queryFields: Set<string>;
}

function restCalls(op: AnyOperation, args: Record<string, unknown>): RestCall[] {
  const calls: RestCall[] = [];
  const none = new Set<string>();
  if (op.tool !== false) {
    calls.push({
      label: `POST /api/v1/tools/${op.name}`,
      method: 'POST',
      path: `/api/v1/tools/${op.name}`,
      body: args,
      bodyFields: new Set(Object.keys(args)),
      queryFields: none,
    });
  }
  for (const route of op.routes as HttpRoute[]) {
    const remaining: Record<string, unknown> = {};
    Object.defineProperties(remaining, Object.getOwnPropertyDescriptors(args));
    let path = `/api/v1${route.path}`;
    for (const [, param] of route.path.matchAll(/:(\w+)/g)) {
      const field = route.params?.[param!] ?? param!;
      path = path.replace(`:${param}`, encodePart(asText(remaining[field] ?? '')));
      delete remaining[field];
    }
    const label = `${route.method} ${route.path}`;
    if (route.method === 'GET' || route.method === 'DELETE') {
      const byField = new Map(Object.entries(route.query ?? {}).map(([q, f]) => [f, q]));
      const query = Object.entries(remaining)
        .map(([k, v]) => `${encodePart(byField.get(k) ?? k)}=${encodePart(asText(v))}`)
        .join('&');
      calls.push({
        label,
        method: route.method,
        path: query ? `${path}?${query}` : path,
        bodyFields: none,
        queryFields: new Set(Object.keys(remaining)),
      });
    } else {
      calls.push({
        label,
        method: route.method,
        path,
        body: remaining,
        bodyFields: new Set(Object.keys(remaining)),
        queryFields: none,
      });
    }
  }
  return calls.filter((c) => c.path.length <= MAX_URL);
}

/**
 * Whether a refused value is still refused once it is query-string text (where `5` and `"5"` are
 * one): an unknown field, text with NUL, text longer than the field allows.
 */
function refusedAsText(op: AnyOperation, c: Case): boolean {
  if (c.extra) return true;
  const text = asText(c.hostile.value);
  const schema = shapeOf(op)[c.field]!;
  const max = kindOf(schema) === 'string' ? stringMax(schema) : null;
  return text.includes('\0') || (max !== null && text.trim().length > max);
}

type ToolResult = { isError?: boolean; content?: Array<{ type: string; text?: string }> };

/** A thrown MCP client error: the HTTP status (SdkHttpError) or JSON-RPC code (ProtocolError). */
function assertMcpThrow(error: unknown, label: string): void {
  const thrown = error as { code?: unknown; status?: unknown };
  const code = typeof thrown.status === 'number' ? thrown.status : thrown.code;
  const message = String((error as Error).message ?? error);
  assert.ok(typeof code === 'number', `${label}: the client failed without a code: ${message}`);
  assert.ok(!(code >= 500 && code < 600), `${label}: HTTP ${code}: ${message}`);
  assert.notEqual(code, -32603, `${label}: JSON-RPC internal error: ${message}`);
  assert.ok(!/INTERNAL_ERROR|DATABASE_ERROR/.test(message), `${label}: ${message}`);
}

// ---------------------------------------------------------------------------------------------

/** A small code graph, so the DevLens tools run their queries rather than stop at "no graph". */
const fixtureGraph = {
  commitHash: 'aaaaaaa1111111111111111111111111111111111',
  analyzedAt: '2026-01-01T00:00:00Z',
  nodes: [
    { id: 'file::src/a.ts', name: 'a.ts', type: 'FILE', filePath: 'src/a.ts', startLine: 1, endLine: 20 },
    {
      id: 'src/a.ts::alpha',
      name: 'alpha',
      type: 'FUNCTION',
      filePath: 'src/a.ts',
      startLine: 2,
      endLine: 5,
      rawCode: 'function alpha() { return beta(); }',
    },
    {
      id: 'src/a.ts::beta',
      name: 'beta',
      type: 'FUNCTION',
      filePath: 'src/a.ts',
      startLine: 6,
      endLine: 9,
      technicalSummary: 'Computes the beta value.',
    },
    {
      id: 'src/b.ts::Gamma',
      name: 'Gamma',
      type: 'CLASS',
      filePath: 'src/b.ts',
      startLine: 1,
      endLine: 30,
      security: { severity: 'low', summary: 'none' },
      metadata: { kind: 'class' },
    },
  ],
  edges: [
    { from: 'src/a.ts::alpha', to: 'src/a.ts::beta', type: 'CALLS' },
    { from: 'src/b.ts::Gamma', to: 'src/a.ts::alpha', type: 'CALLS' },
    { from: 'file::src/a.ts', to: 'src/a.ts::alpha', type: 'EXPORTS' },
  ],
};

test('every input field of every operation is bounded: strings and arrays have a max length, numbers a range', () => {
  const problems = operations.flatMap((op) =>
    Object.entries(shapeOf(op)).flatMap(([field, schema]) => unbounded(schema, `${op.name}.${field}`)),
  );
  assert.deepEqual(problems, []);
});

for (const backend of backends) {
  describe(`hostile input (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let client: Client;

    withServer(backend, (s) => ({ server, client, database } = s));
    before(async () => {
      const upload = await rest(server.url, 'POST', '/api/v1/graphs?repo=fuzz-repo', fixtureGraph);
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      const task = await rest(server.url, 'POST', '/api/v1/tasks', {
        title: 'Fuzz base',
        description: 'd',
        task_type: 'testing',
        priority: 5,
        phase_name: 'Fuzz',
      });
      assert.equal(task.status, 201, JSON.stringify(task.body));
      const memory = await rest(server.url, 'POST', '/api/v1/memories', {
        content: 'Fuzz base memory about alpha',
        content_type: 'context',
        keywords: ['fuzz'],
      });
      assert.equal(memory.status, 201, JSON.stringify(memory.body));
      const key = await rest(server.url, 'POST', '/api/v1/keys', { name: 'fuzz-key', scopes: ['read'] });
      assert.equal(key.status, 201, JSON.stringify(key.body));
      const plans = await rest(server.url, 'GET', '/api/v1/plans');
      known = {
        task_id: task.body.task.id,
        memory_id: memory.body.memory_id,
        id: plans.body.plans[0].id,
        jobId: '0123456789ab',
        graphId: 'no-such-graph',
        name: 'fuzz-key',
        node: 'src/a.ts::alpha',
        target: 'alpha',
        query: 'alpha',
        task: 'how does alpha call beta',
        content: 'Fuzz base memory about alpha',
        title: 'Fuzz task',
        description: 'made by the fuzzer',
        phase_name: 'Fuzz',
      };
    });

    for (const op of operations) {
      test(`${op.name}: hostile arguments over ${op.tool === false ? '' : 'MCP, the tool route and '}its REST routes`, async () => {
        const send = async (c: Case) => {
          const args = argsFor(op, c);
          const what = `${op.name} ${c.extra ? 'unknown field' : 'field'} "${c.field}" = ${describeValue(c.hostile.value)} (${c.hostile.label})`;
          let counts = await rowCounts(database);

          const check = async (label: string, rejected: boolean) => {
            const now = await rowCounts(database);
            if (rejected) assert.deepEqual(now, counts, `${label}: a rejected request wrote rows`);
            counts = now;
          };

          for (const call of restCalls(op, args)) {
            const label = `${call.label}: ${what}`;
            const r = await rest(server.url, call.method, call.path, call.body);
            assert.ok(r.status < 500, `${label}: HTTP ${r.status} ${describeValue(r.body)}`);
            if (r.status >= 400) assertErrorBody(r.status, r.body, label);
            if (
              c.hostile.reject &&
              (call.bodyFields.has(c.field) || (call.queryFields.has(c.field) && refusedAsText(op, c)))
            ) {
              assert.ok(
                r.status === 400 || r.status === 413 || r.status === 414,
                `${label}: refused, got HTTP ${r.status} ${describeValue(r.body)}`,
              );
              if (r.status === 400 && r.body?.error) {
                assert.equal(r.body.error.code, 'VALIDATION_ERROR', label);
                // Refused before parsing (json-body.ts): too deep names where, too many names the body.
                const shape =
                  call.body !== undefined && refusedWhole(call.body)
                    ? jsonShapeProblem(JSON.stringify(call.body))
                    : null;
                const field = shape ? shape.field : call.body !== undefined && poisoned(call.body) ? '(body)' : c.field;
                // A key that cannot be percent-encoded as UTF-8 (a lone surrogate) arrives as the text it was sent as.
                const undecodable = call.queryFields.has(c.field) && LONE_SURROGATE.test(c.field);
                if (!undecodable)
                  assert.ok(
                    namesField(r.body, field),
                    `${label}: the error names "${field}": ${describeValue(r.body)}`,
                  );
              }
            }
            await check(label, r.status >= 400);
          }

          if (op.tool !== false) {
            const label = `MCP ${what}`;
            let result: ToolResult | undefined;
            try {
              result = (await client.callTool({ name: op.name, arguments: args })) as ToolResult;
            } catch (error) {
              assertMcpThrow(error, label);
              // Only a body Fastify refuses whole (see poisoned) fails the call itself.
              assert.ok(
                poisoned(args) || (error as { status?: unknown }).status === 413,
                `${label}: the call failed: ${String(error)}`,
              );
            }
            if (result) {
              const text = result.content?.map((p) => p.text ?? '').join('\n') ?? '';
              for (const code of SERVER_FAULT_CODES) assert.ok(!text.includes(`: ${code}:`), `${label}: ${text}`);
              if (result.isError) assert.match(text, /^❌ Error [^:]+: [A-Z_]+: /, label);
              if (c.hostile.reject) {
                assert.equal(result.isError, true, `${label}: refused, got ${text.slice(0, 200)}`);
                assert.ok(
                  text.includes(': VALIDATION_ERROR: ') && text.includes(fieldName(c.field)),
                  `${label}: names "${c.field}": ${text.slice(0, 300)}`,
                );
              }
            }
            await check(label, result === undefined || result.isError === true);
          }
        };
        // Every time, not by chance: each prototype-ish key as an unknown field, and each text field
        // filled to its limit (and past it) with text no index can shrink, NUL and a lone surrogate.
        for (const key of PROTO_KEYS.filter((k) => !Object.hasOwn(shapeOf(op), k))) {
          for (const value of ['x', 1, null, protoObject()])
            await send({ field: key, hostile: { value, reject: true, label: 'unknown field' }, extra: true });
        }
        for (const [field, schema] of Object.entries(shapeOf(op))) {
          const kind = kindOf(schema);
          const text =
            kind === 'array' && kindOf(arrayElement(schema)) === 'string'
              ? arrayElement(schema)
              : kind === 'string'
                ? schema
                : null;
          if (!text) continue;
          const max = stringMax(text) ?? 10_000;
          const wrap = (value: string) => (kind === 'array' ? [value] : value);
          const edges: Hostile[] = [
            { value: wrap(distinctWords(max)), reject: false, label: `${max} characters of distinct words` },
            { value: wrap(randomCjk(max)), reject: false, label: `${max} random CJK characters` },
            { value: wrap(randomCjk(max + 1)), reject: true, label: `${max + 1} random CJK characters` },
            { value: wrap('a\0b'), reject: true, label: 'NUL byte' },
            { value: wrap('a\uD800b'), reject: true, label: 'lone surrogate' },
          ];
          for (const hostile of edges) await send({ field, hostile, extra: false });
        }
        await fc.assert(fc.asyncProperty(caseFor(op), send), fcOptions());
      });
    }

    test('raw JSON bodies: malformed, prototype keys, non-objects, deep nesting, foreign content types → 4xx, nothing written', async () => {
      const deepArray = `{"title": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const deepObject = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
      const deepProto = `${'{"a":'.repeat(20_000)}{"__proto__": {"x": 1}}${'}'.repeat(20_000)}`;
      /** [label, body, content type, refused by every route]: a non-object or unparsable body is never an operation's arguments. */
      const bodies: Array<[string, string, string, boolean]> = [
        ['malformed', '{"title": ', 'application/json', true],
        ['trailing comma', '{"title": "x",}', 'application/json', true],
        ['single quotes', "{'title': 'x'}", 'application/json', true],
        ['trailing garbage', '{} x', 'application/json', true],
        ['NUL', '\u0000', 'application/json', true],
        ['BOM then object', '\uFEFF{"title": "x"}', 'application/json', false],
        ['__proto__ key', '{"__proto__": {"isAdmin": true}, "title": "x"}', 'application/json', true],
        ['nested __proto__', '{"title": {"__proto__": {"x": 1}}}', 'application/json', true],
        ['constructor.prototype', '{"constructor": {"prototype": {"isAdmin": true}}}', 'application/json', true],
        ['an array', '[{"title": "x"}]', 'application/json', true],
        ['an empty array', '[]', 'application/json', true],
        ['a string', '"x"', 'application/json', true],
        ['a number', '1e999', 'application/json', true],
        ['true', 'true', 'application/json', true],
        ['null', 'null', 'application/json', true],
        ['empty', '', 'application/json', true],
        ['deep arrays', deepArray, 'application/json', true],
        ['deep objects', deepObject, 'application/json', true],
        ['deep __proto__', deepProto, 'application/json', true],
        ['lone surrogate escape in a key', '{"\\ud800": 1}', 'application/json', true],
        ['NUL escape in a key', '{"\\u0000": 1}', 'application/json', true],
        ['utf-16 charset', '{}', 'application/json; charset=utf-16', false],
        ['bogus charset', '{}', 'application/json; charset=ebcdic', false],
        ['text/plain', '{}', 'text/plain', true],
        ['form', 'title=x', 'application/x-www-form-urlencoded', true],
        ['no type', '{}', '', false],
        ['weird type', '{}', 'application/json\u0000', false],
      ];
      const targets: Array<[string, string]> = [];
      for (const op of tools) targets.push(['POST', `/api/v1/tools/${op.name}`]);
      for (const op of operations) {
        for (const route of op.routes) {
          if (route.method === 'GET' || route.method === 'DELETE') continue;
          targets.push([route.method, `/api/v1${route.path.replace(/:(\w+)/g, '0123456789ab')}`]);
        }
      }
      let counts = await rowCounts(database);
      for (const [method, path] of targets) {
        for (const [label, body, type, refused] of bodies) {
          const headers: Record<string, string> = type ? { 'content-type': type } : {};
          let response: Response;
          try {
            response = await fetch(`${server.url}${path}`, { method, headers, body });
          } catch (error) {
            // fetch itself refuses a header value with NUL: nothing reached the server.
            assert.match(String((error as Error).cause ?? error), /header|invalid/i, `${method} ${path} ${label}`);
            continue;
          }
          const text = await response.text();
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* keep the text */
          }
          const where = `${method} ${path} with ${label}`;
          assert.ok(response.status < 500, `${where}: HTTP ${response.status} ${describeValue(parsed)}`);
          if (refused)
            assert.ok(response.status >= 400, `${where}: refused, got ${response.status} ${describeValue(parsed)}`);
          if (response.status >= 400) assertErrorBody(response.status, parsed, where);
          const now = await rowCounts(database);
          if (response.status >= 400) assert.deepEqual(now, counts, `${where}: a rejected body wrote rows`);
          counts = now;
        }
      }
    });

    test('raw JSON-RPC at /mcp: batches, half-valid requests, wrong ids and types → no 5xx, no internal error, sessions keep working', async () => {
      const sessionId = await rawInitialize(server.url);
      const call = (params: unknown, id: unknown = 7) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
      const list = { jsonrpc: '2.0', id: 3, method: 'tools/list' };
      const bodies: Array<[string, string]> = [
        ['empty batch', '[]'],
        ['numbers batch', '[1,2]'],
        ['half-valid batch', JSON.stringify([list, 5, { jsonrpc: '2.0' }])],
        [
          'batch of calls',
          JSON.stringify([
            call({ name: 'devstream_list_tasks', arguments: {} }, 1),
            call({ name: 'devstream_list_tasks', arguments: { limit: -1 } }, 2),
          ]),
        ],
        ['missing jsonrpc', JSON.stringify({ id: 1, method: 'tools/list' })],
        ['jsonrpc 1.0', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' })],
        ['missing method', JSON.stringify({ jsonrpc: '2.0', id: 1 })],
        ['numeric method', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 42 })],
        ['unknown method', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/explode' })],
        ['object id', JSON.stringify({ ...list, id: { a: 1 } })],
        ['array id', JSON.stringify({ ...list, id: [1] })],
        ['null id', JSON.stringify({ ...list, id: null })],
        ['huge numeric id', '{"jsonrpc":"2.0","id":1e308,"method":"tools/list"}'],
        ['bigint id', '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}'],
        ['fractional id', JSON.stringify({ ...list, id: 0.5 })],
        ['huge string id', JSON.stringify({ ...list, id: 'i'.repeat(100_000) })],
        ['lone surrogate id', JSON.stringify({ ...list, id: '\uD800' })],
        ['a response, not a request', JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })],
        ['an error response', JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } })],
        ['params a string', JSON.stringify(call('x'))],
        ['params null', JSON.stringify(call(null))],
        ['no params', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call' })],
        ['name an object', JSON.stringify(call({ name: { a: 1 }, arguments: {} }))],
        ['name huge', JSON.stringify(call({ name: 'n'.repeat(100_000), arguments: {} }))],
        ['name with NUL', JSON.stringify(call({ name: 'devstream_list_tasks\u0000', arguments: {} }))],
        ['arguments a string', JSON.stringify(call({ name: 'devstream_list_tasks', arguments: 'x' }))],
        ['arguments an array', JSON.stringify(call({ name: 'devstream_list_tasks', arguments: [1] }))],
        ['arguments null', JSON.stringify(call({ name: 'devstream_list_tasks', arguments: null }))],
        [
          'arguments with __proto__',
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"devstream_list_tasks","arguments":{"__proto__":{"x":1}}}}`,
        ],
        [
          'arguments deep',
          `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"devstream_store_memory","arguments":{"content":${'['.repeat(50_000)}${']'.repeat(50_000)},"content_type":"code"}}}`,
        ],
        [
          'params deep',
          `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`,
        ],
        ['id deep', `{"jsonrpc":"2.0","id":${'['.repeat(50_000)}${']'.repeat(50_000)},"method":"tools/list"}`],
        [
          '_meta hostile',
          JSON.stringify(call({ name: 'devstream_list_tasks', arguments: {}, _meta: { progressToken: { a: [1] } } })),
        ],
        [
          'setLevel bogus',
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'loudest' } }),
        ],
        ['second initialize', JSON.stringify(initializeBody)],
        [
          'notification with junk',
          JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { x: 1 } } }),
        ],
        ['malformed JSON', '{"jsonrpc": "2.0", '],
      ];
      const before = await rowCounts(database);
      for (const withSession of [false, true]) {
        for (const [label, body] of bodies) {
          const where = `${label} (${withSession ? 'in a session' : 'no session'})`;
          const r = await rawMcp(server.url, body, withSession ? { sessionId } : {});
          assert.ok(r.status < 500, `${where}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
          const messages = Array.isArray(r.json) ? r.json : r.json ? [r.json] : [];
          for (const m of messages) {
            assert.notEqual(m?.error?.code, -32603, `${where}: internal error ${describeValue(m)}`);
            const text = JSON.stringify(m?.result ?? '');
            for (const code of SERVER_FAULT_CODES)
              assert.ok(!text.includes(`: ${code}:`), `${where}: ${text.slice(0, 300)}`);
          }
        }
      }
      // Hostile session ids.
      for (const id of ['x'.repeat(8_000), '../../etc/passwd', "'; drop table jobs; --", '\t']) {
        for (const method of ['POST', 'GET', 'DELETE']) {
          const response = await fetch(`${server.url}/mcp`, {
            method,
            headers: { ...MCP_HEADERS, 'mcp-session-id': id },
            ...(method === 'POST' ? { body: JSON.stringify(list) } : {}),
          });
          await response.body?.cancel();
          assert.ok(
            response.status >= 400 && response.status < 500,
            `${method} with session id ${describeValue(id)}: got ${response.status}`,
          );
        }
      }
      assert.deepEqual(await rowCounts(database), before, 'only rejected calls: nothing written');
      const still = await rawMcp(server.url, JSON.stringify(list), { sessionId });
      assert.equal(still.status, 200, still.text.slice(0, 300));
      assert.ok(Array.isArray(still.json?.result?.tools), 'the raw session still lists tools');
      const viaClient = await client.listTools();
      assert.ok(viaClient.tools.length > 0, 'the SDK client still works');
    });

    test('graph uploads: hostile query values and node fields → 4xx naming the field, nothing written', async () => {
      const baseNode = {
        id: 'src/z.ts::zeta',
        name: 'zeta',
        type: 'FUNCTION',
        filePath: 'src/z.ts',
        startLine: 1,
        endLine: 2,
        metadata: { k: 'v' },
      };
      const queryFields = ['repo', 'graphId', 'commit', 'branch'] as const;
      const nodeFields = [
        'id',
        'name',
        'type',
        'filePath',
        'rawCode',
        'technicalSummary',
        'startLine',
        'score',
      ] as const;
      /** Text any correct service refuses wherever it goes. */
      const refusedText = fc
        .tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...NULS, ...LONE_SURROGATES), fc.string({ maxLength: 4 }))
        .map(([a, b, c]) => a + b + c);
      const odd = fc.constantFrom(...SQL_META, ...TRAVERSAL, ...UNICODE.filter((u) => u.trim() !== ''));
      const upload = fc.oneof(
        fc.record({
          where: fc.constant('query' as const),
          field: fc.constantFrom(...queryFields),
          value: fc.oneof(refusedText, odd),
        }),
        fc.record({
          where: fc.constant('node' as const),
          field: fc.constantFrom(...nodeFields),
          value: fc.oneof(
            refusedText,
            odd,
            wrongTypes('any').map((h) => h.value),
          ),
        }),
        fc.record({
          where: fc.constant('metadata' as const),
          field: fc.constant('metadata'),
          value: fc.oneof(refusedText, fc.constant(nested(3_000, 'object'))),
        }),
        fc.record({ where: fc.constant('metadata key' as const), field: fc.constant('metadata'), value: refusedText }),
      );
      await fc.assert(
        fc.asyncProperty(upload, async (c) => {
          const node: Record<string, unknown> = { ...baseNode };
          const query: Record<string, string> = { repo: 'fuzz-upload' };
          // Graph text may hold NUL (source code can; it is stored without them); a lone surrogate never.
          const textRefused = typeof c.value === 'string' && LONE_SURROGATE.test(c.value);
          let field = c.field as string;
          let mustRefuse = textRefused;
          if (c.where === 'query') {
            query[c.field] = asText(c.value);
            // A lone surrogate cannot be percent-encoded as UTF-8: its WTF-8 bytes arrive as undecodable text, kept as sent.
            mustRefuse = (c.value as string).includes('\0');
          } else if (c.where === 'node') {
            node[c.field] = c.value;
            field = `nodes[0].${c.field}`;
          } else if (c.where === 'metadata') {
            node.metadata = { k: c.value };
            field = 'nodes[0].metadata';
          } else {
            node.metadata = { [c.value as string]: 1 };
            field = 'nodes[0].metadata';
            mustRefuse = true;
          }
          const qs = Object.entries(query)
            .map(([k, v]) => `${k}=${encodePart(v)}`)
            .join('&');
          const body = JSON.stringify({
            commitHash: 'bbbbbbb2222222',
            nodes: [node],
            edges: [{ from: 'src/z.ts::zeta', to: 'x', type: 'CALLS', metadata: { v: c.value } }],
          });
          const before = await rowCounts(database);
          const { status, body: parsed } = await rest(server.url, 'POST', `/api/v1/graphs?${qs}`, body);
          const where = `upload with ${c.where} ${c.field} = ${describeValue(c.value)}`;
          assert.ok(status < 500, `${where}: HTTP ${status} ${describeValue(parsed)}`);
          if (status >= 400) {
            assertErrorBody(status, parsed, where);
            assert.deepEqual(await rowCounts(database), before, `${where}: a rejected upload wrote rows`);
          }
          if (mustRefuse) {
            assert.equal(status, 400, `${where}: refused, got ${status} ${describeValue(parsed)}`);
            const fields: string[] = parsed.error.details.issues.map((i: { field: string }) => i.field);
            const named = fields.some(
              (f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`) || f.startsWith('edges[0]'),
            );
            assert.ok(named, `${where}: names ${field}: ${describeValue(parsed)}`);
          }
        }),
        fcOptions(Math.max(10, Math.round(RUNS * 1.5))),
      );
    });

    test('raw graph uploads: deep nesting, NUL and lone-surrogate escapes, out-of-range values → 4xx naming the field, nothing written', async () => {
      /** Incompressible text (pseudo-random CJK): a btree entry Postgres cannot shrink below its ~2.7 kB limit. */
      const cjk = (n: number) =>
        Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919 + 104_729) % 20_000))).join('');
      const node = (extra: string) =>
        `{"id": "src/y.ts::yota", "type": "FUNCTION", "filePath": "src/y.ts", "startLine": 1${extra}}`;
      const file = (nodeText: string, head = '"commitHash": "ccccccc3333333"') =>
        `{${head}, "nodes": [${nodeText}], "edges": []}`;
      /** [label, body, the field a refusal names; null: NUL in graph text, which may be stored without its NULs]. */
      const cases: Array<[string, string, string | null]> = [
        [
          'deep metadata',
          file(node(`, "metadata": {"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`)),
          'nodes[0].metadata',
        ],
        [
          'deep metadata objects',
          file(node(`, "metadata": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)),
          'nodes[0].metadata',
        ],
        [
          'deep unknown field',
          file(node(`, "parentInfo": ${'['.repeat(100_000)}${']'.repeat(100_000)}`)),
          'nodes[0].parentInfo',
        ],
        ['NUL escape in metadata', file(node(', "metadata": {"a": "x\\u0000y"}')), null],
        ['NUL escape in a metadata key', file(node(', "metadata": {"\\u0000": 1}')), 'nodes[0].metadata'],
        ['lone surrogate in the name', file(node(', "name": "a\\ud800"')), 'nodes[0].name'],
        ['lone surrogate in rawCode', file(node(', "rawCode": "\\udfff"')), 'nodes[0].rawCode'],
        [
          'lone surrogate in the id',
          `{"commitHash": "ccccccc3333333", "nodes": [{"id": "\\ud800", "type": "FUNCTION"}]}`,
          'nodes[0].id',
        ],
        ['NUL in the type', `{"commitHash": "ccccccc3333333", "nodes": [{"id": "a", "type": "F\\u0000"}]}`, null],
        [
          'NUL in an edge end',
          file(node(''), '"commitHash": "ccccccc3333333", "edges": [{"from": "a\\u0000", "to": "b", "type": "CALLS"}]'),
          null,
        ],
        [
          'lone surrogate in an edge end',
          file(node(''), '"commitHash": "ccccccc3333333", "edges": [{"from": "a", "to": "\\udc00", "type": "CALLS"}]'),
          'edges[0].to',
        ],
        ['id of 2000 CJK characters', file(`{"id": "${cjk(2_000)}", "type": "FUNCTION"}`), 'nodes[0].id'],
        ['name of 3000 CJK characters', file(node(`, "name": "${cjk(3_000)}"`)), 'nodes[0].name'],
        [
          'edge end of 3000 CJK characters',
          file(
            node(''),
            `"commitHash": "ccccccc3333333", "edges": [{"from": "a", "to": "${cjk(3_000)}", "type": "CALLS"}]`,
          ),
          'edges[0].to',
        ],
        [
          'nodeScores with text',
          file(node(''), '"commitHash": "ccccccc3333333", "nodeScores": {"src/y.ts::yota": "1.2.3"}'),
          'nodeScores.src/y.ts::yota',
        ],
        ['huge startLine', file(node(', "endLine": 1e308')), 'nodes[0].endLine'],
        ['huge score', file(node(', "score": 1e400')), 'nodes[0].score'],
        [
          'deep stats',
          file(node(''), `"commitHash": "ccccccc3333333", "stats": ${'['.repeat(100_000)}${']'.repeat(100_000)}`),
          'stats',
        ],
        ['NUL in stats', file(node(''), '"commitHash": "ccccccc3333333", "stats": {"a": "\\u0000"}'), null],
        [
          'lone surrogate in stats',
          file(node(''), '"commitHash": "ccccccc3333333", "stats": {"a": "\\ud800"}'),
          'stats.a',
        ],
        [
          'unknown top-level field with NUL',
          file(node(''), '"commitHash": "ccccccc3333333", "tool\\u0000": 1'),
          '(body)',
        ],
        [
          'analyzedAt before 4713 BC',
          file(node(''), '"commitHash": "ccccccc3333333", "analyzedAt": "-271821-04-20T00:00:00Z"'),
          'analyzedAt',
        ],
        [
          'analyzedAt past the largest date',
          file(node(''), '"commitHash": "ccccccc3333333", "analyzedAt": 1e20'),
          'analyzedAt',
        ],
        ['commitHash with a lone surrogate', file(node(''), '"commitHash": "c\\ud800"'), 'commitHash'],
        ['malformed JSON', '{"commitHash": "c", "nodes": [', '(body)'],
        ['not an object', '[1, 2]', '(body)'],
        ['nodes an object', '{"commitHash": "c", "nodes": {"a": 1}}', 'nodes'],
      ];
      for (const [label, body, field] of cases) {
        const before = await rowCounts(database);
        const { status, body: parsed } = await rest(server.url, 'POST', '/api/v1/graphs?repo=fuzz-raw', body);
        const where = `upload with ${label}`;
        assert.ok(status < 500, `${where}: HTTP ${status} ${describeValue(parsed)}`);
        if (field === null) {
          if (status >= 400) assertErrorBody(status, parsed, where);
          continue;
        }
        assert.equal(status, 400, `${where}: refused, got ${status} ${describeValue(parsed)}`);
        assertErrorBody(status, parsed, where);
        const fields: string[] = parsed.error.details.issues.map((i: { field: string }) => i.field);
        assert.ok(
          fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`)),
          `${where}: names ${field}: ${describeValue(parsed)}`,
        );
        assert.deepEqual(await rowCounts(database), before, `${where}: nothing written`);
      }
    });

    test('afterwards the service is healthy and the fixtures are intact', async () => {
      const health = await rest(server.url, 'GET', '/healthz');
      assert.equal(health.status, 200);
      const task = await rest(server.url, 'POST', '/api/v1/tools/devstream_list_tasks', { project: 'default' });
      assert.equal(task.status, 200, JSON.stringify(task.body));
      assert.ok(
        task.body.tasks.some((t: { id: string }) => t.id === known.task_id),
        'the base task is still there',
      );
      const memory = await rest(server.url, 'GET', `/api/v1/memories/${String(known.memory_id)}`);
      assert.equal(memory.status, 200, 'the base memory is still there');
      const symbols = await rest(server.url, 'GET', '/api/v1/symbols?q=alpha&repo=fuzz-repo');
      assert.equal(symbols.status, 200, JSON.stringify(symbols.body));
      const result = await client.callTool({ name: 'devstream_list_plans', arguments: {} });
      assert.notEqual(result.isError, true);
    });
  });
}
