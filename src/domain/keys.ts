import { z } from 'zod';
import { ADMIN_TOKEN_CALLER } from '../auth/authenticator.js';
import { SCOPES } from '../auth/scopes.js';
import { TOOL_PROFILE_NAMES, type ToolProfileName } from '../auth/tool-profiles.js';
import { newToken, hashToken } from '../auth/tokens.js';
import { insertApiKey, listApiKeys, liveKeyNames, revokeApiKey, type ApiKeyRow } from '../db/queries/api-keys.js';
import { notifyChange } from '../db/change-events.js';
import { fromDbError, isDbError } from '../db/errors.js';
import { AppError, notFound } from '../errors.js';
import { pattern } from './fields.js';
import type { Context } from './context.js';
import { newId } from './ids.js';
import { iso, isoOrNull } from './iso-date.js';

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
  token: z.string().describe('Bearer token (dsh_…); shown once'),
  created_at: z.string(),
});
export type CreateKeyResult = z.output<typeof CreateKeyResultSchema>;

/** A new key; its token is in this answer only (the database keeps a hash). */
export async function createKey(
  ctx: Pick<Context, 'db' | 'caller'>,
  input: { name: string; scopes: (typeof SCOPES)[number][]; profile?: ToolProfileName | undefined },
): Promise<CreateKeyResult> {
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
      });
      await notifyChange(trx, { type: 'key-changed', name: inserted.name });
      return inserted;
    });
    const key = toApiKey(row);
    return { name: key.name, scopes: key.scopes, profile: key.profile, token, created_at: key.created_at };
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

export async function listKeys(ctx: Pick<Context, 'db'>, input: { include_revoked: boolean }): Promise<ListKeysResult> {
  const rows = await listApiKeys(ctx.db);
  return { keys: rows.filter((r) => input.include_revoked || r.revoked_at === null).map(toApiKey) };
}

/** What `devstream_revoke_key` returns (DELETE /api/v1/keys/{name}). */
export const RevokeKeyResultSchema = z.object({ success: z.boolean(), key: ApiKeySchema });
export type RevokeKeyResult = z.output<typeof RevokeKeyResultSchema>;

/**
 * Revokes the key, and tells every instance (key-revoked, sent at commit: the CLI's revocations
 * too); the running service (ctx.keys) also ends its own open MCP sessions at once.
 */
export async function revokeKey(ctx: Pick<Context, 'db' | 'keys'>, input: { name: string }): Promise<RevokeKeyResult> {
  const row = await ctx.db.transaction().execute(async (trx) => {
    const revoked = await revokeApiKey(trx, input.name);
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
