import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface ApiKeyRow {
  id: string;
  name: string;
  scopes: string[];
  created_by: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  tool_profile: 'all' | 'core' | null;
  projects: string[] | null;
  repos: string[] | null;
}

const columns = [
  'id',
  'name',
  'scopes',
  'created_by',
  'created_at',
  'last_used_at',
  'revoked_at',
  'tool_profile',
  'projects',
  'repos',
] as const;

export async function insertApiKey(
  db: Kysely<Database>,
  key: {
    id: string;
    name: string;
    tokenHash: string;
    scopes: string[];
    createdBy: string | null;
    toolProfile: 'all' | 'core' | null;
    projects: string[] | null;
    repos: string[] | null;
  },
): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({
      id: key.id,
      name: key.name,
      token_hash: key.tokenHash,
      scopes: key.scopes,
      created_by: key.createdBy,
      tool_profile: key.toolProfile,
      projects: key.projects,
      repos: key.repos,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

export async function listApiKeys(db: Kysely<Database>): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').select(columns).orderBy('created_at').orderBy('name').execute();
}

/** The live (not revoked) key with this token hash, with the hash to compare. */
export async function findLiveKeyByHash(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<(ApiKeyRow & { token_hash: string }) | undefined> {
  return db
    .selectFrom('api_keys')
    .select([...columns, 'token_hash'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The live key with this name (any case), locked until the transaction ends (its revocation follows). */
export async function findLiveKeyByName(db: Kysely<Database>, name: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .select(columns)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Revokes the key with this name (any case); undefined when there is no live key of that name. */
export async function revokeApiKey(db: Kysely<Database>, name: string): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .where('revoked_at', 'is', null)
    .returning(columns)
    .executeTakeFirst();
}

/** Of these key names (any case), the ones of live keys, as stored: one query, by the lower(name) index. */
export async function liveKeyNames(db: Kysely<Database>, names: readonly string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('name')
    .where(sql<boolean>`lower(name) = any(${names.map((n) => n.toLowerCase())}::text[])`)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.name);
}

export async function touchApiKey(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
