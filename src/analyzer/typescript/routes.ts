import ts from 'typescript';

/** An HTTP route registered by a call such as `app.get('/users/:id', handler)`. */
export interface RouteCall {
  /** Upper-case methods: GET, POST… (ALL for Express's `all`). */
  methods: string[];
  path: string;
  /** The handler arguments (middleware first, the handler last), as written. */
  handlers: ts.Expression[];
}

const VERB_METHODS: Record<string, string> = {
  get: 'GET',
  post: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  del: 'DELETE',
  head: 'HEAD',
  options: 'OPTIONS',
  all: 'ALL',
};

const literalText = (e: ts.Expression | undefined) =>
  e && (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) ? e.text : undefined;
const isHandler = (e: ts.Expression) =>
  ts.isArrowFunction(e) ||
  ts.isFunctionExpression(e) ||
  ts.isIdentifier(e) ||
  ts.isPropertyAccessExpression(e) ||
  ts.isCallExpression(e);
const isRoutePath = (path: string | undefined): path is string =>
  path !== undefined && (path.startsWith('/') || path === '*');

function property(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of object.properties) {
    if (ts.isPropertyAssignment(p) && p.name.getText() === name) return p.initializer;
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) return p.name;
    if (ts.isMethodDeclaration(p) && p.name.getText() === name) return undefined;
  }
  return undefined;
}

/**
 * The route a call registers, for the Express / Fastify / Koa-router / Hono shapes:
 * `x.get('/path', [middleware…,] handler)` (an options object between them is skipped), and
 * Fastify's `x.route({ method, url, handler })`. The path must be a string literal starting with
 * `/` (so `map.get('key', fallback)` is not a route). Null for any other call.
 */
export function routeOf(call: ts.CallExpression): RouteCall | null {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return null;
  const verb = callee.name.text;
  const args = call.arguments;
  if (verb in VERB_METHODS && args.length >= 2) {
    const path = literalText(args[0]);
    const handlers = args.slice(1).filter(isHandler);
    if (!isRoutePath(path) || handlers.length === 0 || !isHandler(args[args.length - 1]!)) return null;
    return { methods: [VERB_METHODS[verb]!], path, handlers };
  }
  if (verb === 'route' && args.length === 1 && ts.isObjectLiteralExpression(args[0]!)) {
    const options = args[0];
    const path = literalText(property(options, 'url') ?? property(options, 'path'));
    const method = property(options, 'method');
    const handler = property(options, 'handler');
    const methods =
      method && ts.isArrayLiteralExpression(method)
        ? method.elements.map((m) => literalText(m))
        : [literalText(method)];
    if (!isRoutePath(path) || !handler || methods.length === 0 || methods.some((m) => m === undefined)) return null;
    return { methods: methods.map((m) => m!.toUpperCase()), path, handlers: [handler] };
  }
  return null;
}
