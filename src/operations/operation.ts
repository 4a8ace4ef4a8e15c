import type { z } from 'zod';
import type { Context } from '../domain/context.js';
import type { ResourceLink } from '../domain/resource-links.js';
import { validationError } from '../errors.js';
import { toFieldIssues } from '../domain/field-issues.js';

import type { Scope } from '../auth/scopes.js';

export type { ResourceLink, Scope };

export interface HttpRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Under /api/v1, Fastify syntax: `/tasks/:id`. */
  path: string;
  /** Success status (default 200). */
  status?: number;
  /** Path parameter → input field, when the names differ (`{ id: 'task_id' }`). */
  params?: Record<string, string>;
  /** Query-string name → input field, when the names differ (`{ q: 'query' }`). */
  query?: Record<string, string>;
}

/**
 * One operation, defined once. The MCP tool, the REST routes and the OpenAPI entries are all
 * derived from this object (design.md §2), so validation, scope and errors cannot drift apart.
 */
export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  /** Tool name, e.g. `devstream_list_tasks`. */
  name: string;
  title: string;
  description: string;
  /** How errors name the operation: `❌ Error <action>: …` (e.g. "creating task"). */
  action: string;
  input: I;
  output: O;
  /** The scope every call needs (MCP lists the tool only to keys holding it). */
  scope: Scope;
  /** The scope a particular call needs when it is more than `scope` (e.g. `repo` analyze: write). */
  scopeFor?(input: z.output<I>): Scope;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /** Exposed as an MCP tool and at POST /api/v1/tools/{name} (default true). */
  tool?: boolean;
  /** Resource-style REST routes for dashboards and scripts. */
  routes: HttpRoute[];
  handler(ctx: Context, input: z.output<I>): Promise<z.input<O>>;
  /** The text block of the MCP result. */
  render(output: z.output<O>, input: z.output<I>): string;
  /**
   * The resources the result names (its tasks, plans or memories), sent after the text block as
   * `resource_link` content items so a client can open one without another call. MCP only: the
   * text, structuredContent and the REST body stay as they are.
   */
  links?(output: z.output<O>): ResourceLink[];
}

/** Identity function that keeps each operation's input/output types tied together. */
export function defineOperation<I extends z.ZodObject, O extends z.ZodObject>(op: Operation<I, O>): Operation<I, O> {
  return op;
}

export type AnyOperation = Operation<z.ZodObject, z.ZodObject>;

/** Validates raw arguments against the operation's input schema; the one validation path for MCP and REST. */
export function parseInput<I extends z.ZodObject>(op: Operation<I, z.ZodObject>, raw: unknown): z.output<I> {
  const result = op.input.safeParse(raw ?? {});
  if (!result.success) throw validationError(toFieldIssues(result.error));
  return result.data;
}
