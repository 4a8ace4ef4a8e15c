/**
 * The error catalogue: every error the service reports carries one of these stable codes.
 * MCP renders them as `isError` tool results (`❌ Error <operation>: <CODE>: <message>`),
 * REST as `{error: {code, message, details}}` with the status below.
 * Callers branch on `code`, never on `message`.
 */
export const ERROR_CODES = {
  VALIDATION_ERROR: { status: 400, summary: 'The input failed validation; the message names each bad field.' },
  UNAUTHORIZED: { status: 401, summary: 'Missing, unknown or revoked API key (send Authorization: Bearer <token>).' },
  FORBIDDEN: {
    status: 403,
    summary:
      "The caller may not do this: the key lacks the operation's scope or the repo, a foreign Host or Origin header, or what this server does not offer (analysis outside ANALYZE_ROOTS, summaries without OLLAMA_SUMMARY_MODEL).",
  },
  NOT_FOUND: {
    status: 404,
    summary:
      'The task, plan, memory, job, code graph, node, route or tool does not exist (a node asked for by a name that matches none lists the closest as suggestions).',
  },
  CONFLICT: { status: 409, summary: 'The write conflicts with existing data (a unique name).' },
  PAYLOAD_TOO_LARGE: { status: 413, summary: 'The request body is larger than the service accepts.' },
  RATE_LIMITED: {
    status: 429,
    summary: 'Too many requests from this key (or address) in the window; see Retry-After.',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, summary: 'The request body is not JSON.' },
  AUTO_CREATE_FAILED: { status: 500, summary: 'A missing project or phase could not be created.' },
  DATABASE_ERROR: { status: 500, summary: 'The database failed the operation (503 when it is unreachable).' },
  AUTH_UNAVAILABLE: {
    status: 503,
    summary:
      'The identity provider (OAUTH_ISSUER, or its introspection endpoint) did not answer, so the access token could not be checked; retry after Retry-After (API keys are unaffected).',
  },
  SHUTTING_DOWN: {
    status: 503,
    summary: 'The service is shutting down; retry (after Retry-After, or on another instance).',
  },
  // Reserved, never thrown: it is in the public spec's catalogue, but an embedder that is down fails no
  // request (stores go text-only and are queued for embedding, searches run keyword-only, and say so).
  EMBEDDING_FAILED: { status: 503, summary: 'The embedding model did not answer (non-blocking for writes).' },
  INTERNAL_ERROR: { status: 500, summary: 'An unexpected fault; details are in the service log, not the response.' },
} as const satisfies Record<string, { status: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One problem with one input field: `field` is a dotted path (`priority`, `keywords.2`). */
export interface FieldIssue {
  field: string;
  message: string;
}

/** An error with a stable code; the only kind of error the adapters render as-is. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { details?: unknown; status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.details = options.details ?? null;
  }

  /** The JSON body REST returns for this error. */
  toJSON(): { error: { code: ErrorCode; message: string; details: unknown } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/** Issues an error lists at most; the rest are counted (`details.more`), so a bad input cannot buy a huge answer. */
export const MAX_LISTED_ISSUES = 20;

/**
 * VALIDATION_ERROR for field-named problems: the message and `details.issues` list the first
 * MAX_LISTED_ISSUES; `details.more` counts the others (150,000 unknown fields once answered 10 MB).
 */
export function validationError(issues: FieldIssue[]): AppError {
  const listed = issues.slice(0, MAX_LISTED_ISSUES);
  const more = issues.length - listed.length;
  const message =
    listed.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ') +
    (more > 0 ? `; and ${more} more problem(s)` : '');
  return new AppError('VALIDATION_ERROR', message, { details: more > 0 ? { issues: listed, more } : { issues } });
}

export function notFound(message: string, details?: unknown): AppError {
  return new AppError('NOT_FOUND', message, { details });
}
