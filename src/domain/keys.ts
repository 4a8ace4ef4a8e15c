import { z } from 'zod';
import { ADMIN_TOKEN_CALLER } from '../auth/authenticator.js';
import { SCOPES, type Caller } from '../auth/scopes.js';
import { TOOL_PROFILE_NAMES, type ToolProfileName } from '../auth/tool-profiles.js';
import { newToken, hashToken } from '../auth/tokens.js';
import {
  findLiveKeyByName,
  insertApiKey,
  listApiKeys,
  liveKeyNames,
  revokeApiKey,
  type ApiKeyRow,
} from '../db/queries/api-keys.js';
import { notifyChange } from '../db/change-events.js';
import { fromDbError, isDbError } from '../db/errors.js';
import { AppError, notFound } from '../errors.js';
import { name as nameField, pattern } from './fields.js';
import type { Context } from './context.js';
import { newId } from './ids.js';
import { iso, isoOrNull } from './iso-date.js';
import { requireProject, requireRepo } from './visibility.js';

/** 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit. */
export const KeyNameSchema = pattern(
  64,
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
).refine(
  (name) => name.toLowerCase() !== ADMIN_TOKEN_CALLER.toLowerCase(),
  `${ADMIN_TOKEN_CALLER} is reserved for the bootstrap credential`,
);

export const ScopesSchema = z
  .array(z.enum(SCOPES))
  .min(1, 'name at least one scope: read, write, admin')
  .max(3)
  .transform((scopes) => SCOPES.filter((s) => scopes.includes(s)));

/** Names a key may be limited to at most, per kind. */
export const MAX_KEY_LIMITS = 100;

/** A list of names (projects or repos) a key is limited to: 1-100, each once (any case; the first spelling kept). */
const limitList = (what: 'project' | 'repo') =>
  z
    .array(nameField(what))
    .min(1, `name at least one ${what} (leave ${what}s out for every ${what})`)
    .max(MAX_KEY_LIMITS, `at most ${MAX_KEY_LIMITS} ${what}s`)
    .transform((names) => names.filter((n, i) => names.findIndex((m) => m.toLowerCase() === n.toLowerCase()) === i));

/** The projects a key may see and write (exact titles, any case). */
export const KeyProjectsSchema = limitList('project');
/** The code graphs a key may see and upload (repo names, any case). */
export const KeyReposSchema = limitList('repo');

/** A key's default MCP tool profile, as its create input names it. */
export const ProfileSchema = z.enum(TOOL_PROFILE_NAMES);

const profileOut = z
  .enum(TOOL_PROFILE_NAMES)
  .nullable()
  .describe("The key's default MCP tool profile (?tools= on the MCP URL wins); null: none set, so all");

export const ApiKeySchema = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  profile: profileOut,
  projects: z.array(z.string()).nullable().describe('The projects the key is limited to; null: every project'),
  repos: z.array(z.string()).nullable().describe('The code graphs (repos) the key is limited to; null: every graph'),
  created_by: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable().describe('Recorded at most once a minute'),
  revoked_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    name: row.name,
    scopes: SCOPES.filter((s) => row.scopes.includes(s)),
    profile: row.tool_profile,
    projects: row.projects,
    repos: row.repos,
    created_by: row.created_by,
    created_at: iso(row.created_at),
    last_used_at: isoOrNull(row.last_used_at),
    revoked_at: isoOrNull(row.revoked_at),
  };
}

/** What `devstream_create_key` returns (POST /api/v1/keys). */
export const CreateKeyResultSchema = z.object({
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  profile: profileOut,
  projects: z.array(z.string()).nullable().describe('The projects the key is limited to; null: every project'),
  repos: z.array(z.string()).nullable().describe('The code graphs (repos) the key is limited to; null: every graph'),
  token: z.string().describe('Bearer token (dsh_…); shown once'),
  created_at: z.string(),
});
export type CreateKeyResult = z.output<typeof CreateKeyResultSchema>;

/**
 * A new key; its token is in this answer only (the database keeps a hash). A caller limited to
 * projects or repos makes keys within its own limits only: what it leaves out it passes on, and a
 * project or repo beyond them is FORBIDDEN (a limited admin key cannot mint an unlimited one).
 */
export async function createKey(
  ctx: Pick<Context, 'db' | 'caller'>,
  input: {
    name: string;
    scopes: (typeof SCOPES)[number][];
    profile?: ToolProfileName | undefined;
    projects?: string[] | undefined;
    repos?: string[] | undefined;
  },
): Promise<CreateKeyResult> {
  const { caller } = ctx;
  const projects = input.projects ?? (caller.projects ? [...caller.projects] : null);
  const repos = input.repos ?? (caller.repos ? [...caller.repos] : null);
  for (const p of input.projects ?? []) requireProject(caller, p, 'projects');
  for (const r of input.repos ?? []) requireRepo(caller, r, 'repos');
  const token = newToken();
  try {
    // The key and its announcement (key-changed, to every instance) commit together.
    const row = await ctx.db.transaction().execute(async (trx) => {
      const inserted = await insertApiKey(trx, {
        id: newId(),
        name: input.name,
        tokenHash: hashToken(token),
        scopes: input.scopes,
        createdBy: ctx.caller.name,
        toolProfile: input.profile ?? null,
        projects,
        repos,
      });
      await notifyChange(trx, { type: 'key-changed', name: inserted.name });
      return inserted;
    });
    const key = toApiKey(row);
    const { name, scopes, profile, created_at } = key;
    return { name, scopes, profile, projects: key.projects, repos: key.repos, token, created_at };
  } catch (error) {
    if (isDbError(error) && fromDbError(error).code === 'CONFLICT') {
      throw new AppError('CONFLICT', `An API key named "${input.name}" exists (revoked keys keep their names)`, {
        details: { field: 'name' },
      });
    }
    throw error;
  }
}

/** What `devstream_list_keys` returns (GET /api/v1/keys). */
export const ListKeysResultSchema = z.object({ keys: z.array(ApiKeySchema) });
export type ListKeysResult = z.output<typeof ListKeysResultSchema>;

/**
 * Whether a caller may see and revoke this key: an unlimited caller every key; one limited to
 * projects or repos only keys limited within its own limits (what it could have made itself), so a
 * limited admin neither learns of nor revokes the keys of other projects.
 */
function withinLimits(caller: Caller, row: Pick<ApiKeyRow, 'projects' | 'repos'>): boolean {
  const within = (limits: ReadonlySet<string> | undefined, names: string[] | null) =>
    limits === undefined || (names !== null && names.every((n) => limits.has(n.toLowerCase())));
  return within(caller.projects, row.projects) && within(caller.repos, row.repos);
}

/** Every key the caller may see (withinLimits), revoked ones too when asked. */
export async function listKeys(
  ctx: Pick<Context, 'db' | 'caller'>,
  input: { include_revoked: boolean },
): Promise<ListKeysResult> {
  const rows = await listApiKeys(ctx.db);
  return {
    keys: rows
      .filter((r) => (input.include_revoked || r.revoked_at === null) && withinLimits(ctx.caller, r))
      .map(toApiKey),
  };
}

/** What `devstream_revoke_key` returns (DELETE /api/v1/keys/{name}). */
export const RevokeKeyResultSchema = z.object({ success: z.boolean(), key: ApiKeySchema });
export type RevokeKeyResult = z.output<typeof RevokeKeyResultSchema>;

/**
 * Revokes the key (one the caller may see: withinLimits), and tells every instance (key-revoked, sent at commit: the CLI's revocations
 * too); the running service (ctx.keys) also ends its own open MCP sessions at once.
 */
export async function revokeKey(
  ctx: Pick<Context, 'db' | 'keys' | 'caller'>,
  input: { name: string },
): Promise<RevokeKeyResult> {
  const row = await ctx.db.transaction().execute(async (trx) => {
    // A key beyond a limited caller's limits is answered as absent (withinLimits): its name reveals nothing.
    const live = await findLiveKeyByName(trx, input.name);
    if (!live || !withinLimits(ctx.caller, live)) return undefined;
    const revoked = await revokeApiKey(trx, live.name);
    if (revoked) await notifyChange(trx, { type: 'key-revoked', name: revoked.name });
    return revoked;
  });
  if (!row) throw notFound(`No live API key named "${input.name}"`);
  ctx.keys?.revoked(row.name);
  return { success: true, key: toApiKey(row) };
}

/**
 * Of these callers' names (as authentication found them), the ones that are no longer a live key:
 * revoked, or gone. ADMIN_TOKEN is no row and is never revoked; it lasts as long as the configuration.
 */
export async function revokedAmong(ctx: Pick<Context, 'db'>, names: readonly string[]): Promise<string[]> {
  // Only names a key can have: not ADMIN_TOKEN, nor an access token's `token:<subject>` (http-transport.ts).
  const keys = names.filter((n) => n !== ADMIN_TOKEN_CALLER && KeyNameSchema.safeParse(n).success);
  if (keys.length === 0) return [];
  const live = new Set(await liveKeyNames(ctx.db, keys));
  return keys.filter((n) => !live.has(n));
}
