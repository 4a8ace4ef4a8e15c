import { z } from 'zod';
import {
  createKey,
  CreateKeyResultSchema,
  KeyNameSchema,
  KeyProjectsSchema,
  KeyReposSchema,
  listKeys,
  ListKeysResultSchema,
  revokeKey,
  RevokeKeyResultSchema,
  ProfileSchema,
  ScopesSchema,
} from '../domain/keys.js';
import { SCOPES } from '../auth/scopes.js';
import { defineOperation } from './operation.js';

// Key management is for people and scripts with an admin key, over REST (and the CLI): not MCP tools.

/** A key's scopes, tool profile and limits in words: `read, write; tools: core; projects: a, b`. */
function describeKey(k: {
  scopes: string[];
  profile: string | null;
  projects: string[] | null;
  repos: string[] | null;
}): string {
  return [
    k.scopes.join(', '),
    ...(k.profile ? [`tools: ${k.profile}`] : []),
    ...(k.projects ? [`projects: ${k.projects.join(', ')}`] : []),
    ...(k.repos ? [`repos: ${k.repos.join(', ')}`] : []),
  ].join('; ');
}

export const createKeyOp = defineOperation({
  name: 'devstream_create_key',
  title: 'Create API key',
  description:
    'Create an API key with the given scopes (read, write, admin). The token is in this answer only: store it now.',
  action: 'creating API key',
  input: z.strictObject({
    name: KeyNameSchema.describe('Unique name; rows the key writes record it as created_by'),
    scopes: ScopesSchema.describe('read: list/search/get; write: create/update/store/delete/upload; admin: API keys'),
    profile: ProfileSchema.optional().describe(
      "The key's default MCP tool profile: core (six tools) or all; ?tools= on the MCP URL wins (default: all)",
    ),
    projects: KeyProjectsSchema.optional().describe(
      'Limit the key to these projects (exact titles, any case; 1-100): it sees and writes nothing else (default: every project)',
    ),
    repos: KeyReposSchema.optional().describe(
      'Limit the key to these code graphs (repo names, any case; 1-100) (default: every graph)',
    ),
  }),
  output: CreateKeyResultSchema,
  scope: 'admin',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  tool: false,
  routes: [{ method: 'POST', path: '/keys', status: 201 }],
  handler: createKey,
  render: (out) => `API key "${out.name}" (${describeKey(out)}): ${out.token}`,
});

export const listKeysOp = defineOperation({
  name: 'devstream_list_keys',
  title: 'List API keys',
  description: 'Every API key with its scopes and when it was created and last used; never the tokens.',
  action: 'listing API keys',
  input: z.strictObject({ include_revoked: z.boolean().default(false).describe('Also list revoked keys') }),
  output: ListKeysResultSchema,
  scope: 'admin',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  tool: false,
  routes: [{ method: 'GET', path: '/keys' }],
  handler: listKeys,
  render: (out) => out.keys.map((k) => `${k.name} (${describeKey(k)})`).join('\n'),
});

export const revokeKeyOp = defineOperation({
  name: 'devstream_revoke_key',
  title: 'Revoke API key',
  description: 'Revoke an API key: it is refused from the next request on. The name stays taken.',
  action: 'revoking API key',
  input: z.strictObject({ name: KeyNameSchema.describe('The key to revoke') }),
  output: RevokeKeyResultSchema,
  scope: 'admin',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  tool: false,
  routes: [{ method: 'DELETE', path: '/keys/:name' }],
  handler: revokeKey,
  render: (out) => `API key "${out.key.name}" revoked`,
});

export const whoamiOp = defineOperation({
  name: 'devstream_whoami',
  title: 'Who am I',
  description:
    'The API key this request carries: its name (null when AUTH=off), its scopes and the projects and code graphs it is limited to. For clients that adapt to what the key may do, like the dashboard.',
  action: 'identifying the caller',
  input: z.strictObject({}),
  output: z.object({
    name: z
      .string()
      .nullable()
      .describe('The key name rows record as created_by; ADMIN_TOKEN for the bootstrap credential; null when AUTH=off'),
    scopes: z.array(z.enum(SCOPES)),
    projects: z
      .array(z.string())
      .nullable()
      .describe('The projects the key is limited to (lower-cased titles); null: every project'),
    repos: z
      .array(z.string())
      .nullable()
      .describe('The code graphs the key is limited to (lower-cased repo names); null: every graph'),
  }),
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  tool: false,
  routes: [{ method: 'GET', path: '/me' }],
  handler: async ({ caller }) => ({
    name: caller.name,
    scopes: SCOPES.filter((s) => caller.scopes.has(s)),
    projects: caller.projects ? [...caller.projects] : null,
    repos: caller.repos ? [...caller.repos] : null,
  }),
  render: (out) => `${out.name ?? 'anonymous (AUTH=off)'}: ${out.scopes.join(', ')}`,
});

export const keyOperations = [createKeyOp, listKeysOp, revokeKeyOp, whoamiOp];
