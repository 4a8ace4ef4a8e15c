import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { createKey, listKeys, revokeKey } from '../domain/keys.js';
import { AppError } from '../errors.js';
import { createKeyOp, listKeysOp, revokeKeyOp } from '../operations/keys.js';
import { parseInput } from '../operations/operation.js';

export const KEYS_USAGE = `Usage: devstream-hub keys create <name> [--scopes read,write,admin]   (default scopes: read)
                             [--profile core|all]   (its MCP sessions' default tools; ?tools= wins)
                             [--projects a,b] [--repos x,y]   (limit the key to these projects / code graphs)
       devstream-hub keys list [--all]                                   (--all: revoked keys too)
       devstream-hub keys revoke <name>`;

/** `a, b,,c` → `['a', 'b', 'c']`. */
const commaList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The caller rows record for keys made here (created_by). */
const CLI_CALLER = { name: 'cli', scopes: new Set(['read', 'write', 'admin'] as const) };

/**
 * `devstream-hub keys create|list|revoke` against DATABASE_URL, validated by the same schemas as
 * the REST routes. Embedded PGlite is refused: the running server owns its data directory, and a
 * second process opening it would corrupt it. Returns the exit code.
 */
export async function keysCommand(
  config: Config,
  open: () => Promise<Db>,
  args: {
    positionals: string[];
    scopes?: string | undefined;
    profile?: string | undefined;
    projects?: string | undefined;
    repos?: string | undefined;
    all: boolean;
  },
): Promise<number> {
  const [action, name] = args.positionals;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    console.error(action ? `Unknown keys action "${action}".\n\n${KEYS_USAGE}` : KEYS_USAGE);
    return 2;
  }
  if (!config.databaseUrl) {
    console.error(
      'keys works against Postgres (DATABASE_URL). With embedded PGlite the server owns the data directory: ' +
        'start it with ADMIN_TOKEN set and use POST /api/v1/keys, GET /api/v1/keys and DELETE /api/v1/keys/{name} ' +
        '(docs/security.md).',
    );
    return 2;
  }
  const db = await open();
  try {
    const ctx = { db: db.kysely, caller: CLI_CALLER };
    if (action === 'create') {
      const input = parseInput(createKeyOp, {
        name,
        scopes: commaList(args.scopes ?? 'read'),
        ...(args.profile === undefined ? {} : { profile: args.profile }),
        ...(args.projects === undefined ? {} : { projects: commaList(args.projects) }),
        ...(args.repos === undefined ? {} : { repos: commaList(args.repos) }),
      });
      const key = await createKey(ctx, input);
      const tools = key.profile ? ` and tool profile ${key.profile}` : '';
      const limits = [
        ...(key.projects ? [`projects ${key.projects.join(', ')}`] : []),
        ...(key.repos ? [`repos ${key.repos.join(', ')}`] : []),
      ];
      console.log(
        `Created API key "${key.name}" with scopes ${key.scopes.join(', ')}${tools}${limits.length ? `, limited to ${limits.join(' and ')}` : ''}. Its token, shown only now:\n\n${key.token}\n`,
      );
    } else if (action === 'list') {
      const { keys } = await listKeys(ctx, parseInput(listKeysOp, { include_revoked: args.all }));
      if (keys.length === 0) console.log('No API keys.');
      for (const k of keys) {
        const state = k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${k.last_used_at ?? 'never'}`;
        const tools = `tools ${k.profile ?? 'all'}`;
        const limits = [
          ...(k.projects ? [`projects ${k.projects.join(',')}`] : []),
          ...(k.repos ? [`repos ${k.repos.join(',')}`] : []),
        ];
        console.log(
          `${k.name.padEnd(24)} ${k.scopes.join(',').padEnd(16)} ${tools.padEnd(10)} created ${k.created_at}  ${state}${limits.length ? `  ${limits.join('  ')}` : ''}`,
        );
      }
    } else {
      const { key } = await revokeKey(ctx, parseInput(revokeKeyOp, { name }));
      console.log(`Revoked API key "${key.name}".`);
    }
    return 0;
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      console.error(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}
