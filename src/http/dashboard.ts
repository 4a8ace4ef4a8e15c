import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pathOf } from './request-path.js';

/** Where `npm run build:web` puts the dashboard (from src/http and from dist/http alike). */
export const WEB_ROOT = fileURLToPath(new URL('../../web/dist/', import.meta.url));

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => `/${relative(root, join(entry.parentPath, entry.name)).split(sep).join('/')}`);
}

/**
 * The built dashboard under `root` (listed once, when the app is built): its URL paths, and `/`.
 * Static, the same for everyone, no data in them. Empty without a build.
 */
export class DashboardFiles {
  readonly built: boolean;
  private readonly paths: ReadonlySet<string>;

  constructor(readonly root: string = WEB_ROOT) {
    this.built = existsSync(join(root, 'index.html'));
    this.paths = this.built ? new Set(['/', ...listFiles(root)]) : new Set();
  }

  /** A GET of one of the dashboard's own files: past the API-key auth (it calls the API with a key). */
  has(request: FastifyRequest): boolean {
    return (request.method === 'GET' || request.method === 'HEAD') && this.paths.has(pathOf(request));
  }
}

/**
 * The web dashboard at `/` (web/, built by `npm run build:web`, which `npm ci` and `npm run build`
 * run): a single page that only uses the public REST API. Without a build, `/` says how to make one.
 */
export async function registerDashboard(app: FastifyInstance, files: DashboardFiles): Promise<void> {
  const { root } = files;
  if (!files.built) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply.code(404).type('text/plain').send('The dashboard is not built: run `npm run build:web` (npm ci does it).'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    // One route per file found now, not a catch-all: unknown paths stay the service's 404s.
    wildcard: false,
    index: ['index.html'],
    schemaHide: true,
    // Vite's hashed names (assets/) change with each build; index.html and the icon keep theirs and must be asked again.
    // cacheControl off: send's own `public, max-age=0` would otherwise replace the header set here.
    cacheControl: false,
    setHeaders(res, path) {
      const hashed = relative(root, path).startsWith(`assets${sep}`);
      res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
