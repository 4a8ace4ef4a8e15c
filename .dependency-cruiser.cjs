/**
 * The layers of src/, enforced by `npm run lint` (dependency-cruiser). Imports point down only:
 *
 *   entry points   main.ts (the CLI), commands/ (its subcommands), app.ts (the composition root:
 *                  builds the service from every part; never listens). Nothing imports them, except
 *                  that main.ts runs commands/ and app.ts, and http/openapi-document.ts builds the
 *                  app to print its OpenAPI document (`npm run openapi`).
 *   adapters       http/ (REST), mcp/ (MCP): thin loops over the operations; neither imports the other.
 *   operations/    the operation records: one definition per tool and route.
 *   domain/        services, plain functions of (ctx, input). Its fields.ts and field-issues.ts are the
 *                  input vocabulary (field schemas, zod issues as field errors) that operations/ and
 *                  the domain's own non-operation inputs (graph uploads, key names) share.
 *   infrastructure auth/, embeddings/, analyzer/, observability/ sit below domain/ (domain may use
 *                  them; they never import domain/ or anything above). jobs/ sits beside domain/: the
 *                  background runner calls domain services, so domain/ never imports jobs/.
 *   db/            the bottom: the client, schema, SQLSTATE mapping and every SQL statement
 *                  (db/queries/); it imports no other layer.
 *   leaves         the other top-level modules (config.ts, errors.ts, logger.ts, version.ts,
 *                  background-loop.ts, repo-header.ts): importable by every layer, importing no
 *                  module of src/ themselves.
 *
 * Type-only imports count (tsPreCompilationDeps), so a cycle made only of types fails too.
 */

/** Top-level modules that are entry points, not leaves. */
const ENTRY = '^src/(main|app)\\.ts$';
const ABOVE_OPERATIONS = `^src/(http|mcp|commands)/|${ENTRY}`;
const ABOVE_DOMAIN = `^src/operations/|${ABOVE_OPERATIONS}`;
const TRANSPORTS = '^node_modules/(fastify|@fastify/[^/]+|fastify-type-provider-zod|@modelcontextprotocol/[^/]+)/';

/**
 * A layer rule: an error when a module whose path matches `from` imports one matching `to`.
 * @param {string} name @param {string} comment @param {string} from @param {string} to
 */
function layerRule(name, comment, from, to) {
  return { name, severity: 'error', comment, from: { path: from }, to: { path: to } };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle anywhere in src/, type-only imports included: a cycle is two modules that are one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'leaves-import-nothing',
      severity: 'error',
      comment:
        'Top-level leaves (config, errors, logger, version, ...) import no module of src/, so every layer may use them.',
      from: { path: '^src/[^/]+\\.ts$', pathNot: ENTRY },
      to: { path: '^src/' },
    },
    {
      name: 'entry-points-on-top',
      severity: 'error',
      comment: 'main.ts, commands/ and app.ts are the entry points: only main.ts (and the OpenAPI writer) import them.',
      from: { path: '^src/', pathNot: ['^src/main\\.ts$', '^src/commands/', '^src/http/openapi-document\\.ts$'] },
      to: { path: `^src/commands/|${ENTRY}` },
    },
    {
      name: 'adapters-apart',
      severity: 'error',
      comment: 'http/ and mcp/ are two adapters over the same operations; what both need lives below them.',
      from: { path: '^src/(http|mcp)/' },
      to: { path: '^src/(http|mcp)/', pathNot: '^src/$1/' },
    },
    layerRule(
      'operations-below-adapters',
      'operations/ are transport-free records; the adapters import them, never the reverse.',
      '^src/operations/',
      ABOVE_OPERATIONS,
    ),
    layerRule(
      'domain-below-operations',
      'domain/ services know nothing of operations, adapters or entry points.',
      '^src/domain/',
      ABOVE_DOMAIN,
    ),
    layerRule(
      'domain-beside-jobs',
      'jobs/ runs domain services in the background; domain/ queues jobs through db/ and never imports the runner.',
      '^src/domain/',
      '^src/jobs/',
    ),
    layerRule(
      'infrastructure-below-domain',
      'auth/, embeddings/, analyzer/, observability/ are used by domain/ and above; they import none of them.',
      '^src/(auth|embeddings|analyzer|observability)/',
      `^src/(domain|jobs)/|${ABOVE_DOMAIN}`,
    ),
    layerRule(
      'jobs-below-operations',
      'jobs/ sits beside domain/: it may call domain services, never operations, adapters or entry points.',
      '^src/jobs/',
      ABOVE_DOMAIN,
    ),
    {
      name: 'db-at-the-bottom',
      severity: 'error',
      comment: 'db/ imports only itself and the leaves: queries take plain values and return rows.',
      from: { path: '^src/db/' },
      to: { path: '^src/[^/]+/', pathNot: '^src/db/' },
    },
    {
      name: 'core-without-transports',
      severity: 'error',
      comment:
        'Only the adapters (http/, mcp/) and app.ts import Fastify or the MCP SDK: the core and the infrastructure run without a server.',
      from: { path: '^src/', pathNot: ['^src/(http|mcp)/', '^src/app\\.ts$'] },
      to: { path: TRANSPORTS },
    },
    {
      name: 'mcp-sdk-only-in-mcp',
      severity: 'error',
      comment: 'Every MCP SDK import stays in src/mcp/, so an SDK upgrade touches one folder.',
      from: { path: '^src/', pathNot: '^src/mcp/' },
      to: { path: '^node_modules/@modelcontextprotocol/' },
    },
    {
      name: 'sql-only-in-db',
      severity: 'error',
      comment:
        "SQL lives in db/queries/: outside db/, kysely is imported for its types only (the `sql` tag is a value import). Builder calls on a Kysely instance are eslint's no-restricted-syntax.",
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-not-to-dev-deps',
      severity: 'error',
      comment: 'src/ ships: a devDependency imported there would be missing in a production install.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing fails at run time.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
