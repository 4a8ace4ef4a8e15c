/*
 * One concept, hence the length: the service's configuration, one zod schema over the environment
 * (every variable, its default, its bounds and its error message), and the Config type inferred
 * from it. Every variable is in docs/configuration.md; test/docs.test.ts checks both ways.
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const flag = (fallback: '0' | '1' = '0') =>
  z
    .enum(['0', '1', 'true', 'false'], { error: 'must be 0, 1, true or false' })
    .default(fallback)
    .transform((v) => v === '1' || v === 'true');

const list = z
  .string()
  .optional()
  .transform((v) =>
    v === undefined || v.trim() === ''
      ? undefined
      : v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
  );

/** One claim name of a token (OAUTH_PROJECTS_CLAIM, OAUTH_REPOS_CLAIM); empty: unset. */
const claimName = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined))
  .refine((v) => v === undefined || /^[A-Za-z0-9_:./-]{1,100}$/.test(v), { error: 'must be one claim name' });

const int = (min: number, max: number, fallback: number) =>
  z
    .string()
    .default(String(fallback))
    .refine((v) => /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= max, {
      error: `must be an integer from ${min} to ${max}`,
    })
    .transform(Number);

/** A byte size (see parseBytes), `error` naming its examples when unreadable. */
const size = (fallback: string, error: string) =>
  z
    .string()
    .default(fallback)
    .refine((v) => parseBytes(v) !== null, { error })
    .transform((v) => parseBytes(v)!);

const weight = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((v) => v.trim() !== '' && Number.isFinite(Number(v)) && Number(v) >= 0 && Number(v) <= 100, {
      error: 'must be a number from 0 to 100',
    })
    .transform(Number);

/**
 * An optional https URL (http only on a loopback host: a token's keys must not come over the open
 * network in clear), without query or fragment; a trailing slash is dropped unless `keepSlash`.
 */
function optionalUrl(keepSlash = false) {
  return z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? (keepSlash ? v : v.replace(/\/+$/, '')) : undefined))
    .refine((v) => v === undefined || isSecureUrl(v), {
      error:
        'must be an https URL without query or fragment (http only on a loopback host), e.g. https://idp.example.org/realms/team',
    });
}

function isSecureUrl(text: string): boolean {
  try {
    const url = new URL(text);
    if (url.search || url.hash || url.username || url.password) return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  } catch {
    return false;
  }
}

/** The hub scope of each OAuth scope name: `devstream:read=read,devstream:write=write`; null when unreadable. */
export function parseScopeMap(text: string): ReadonlyMap<string, 'read' | 'write' | 'admin'> | null {
  const map = new Map<string, 'read' | 'write' | 'admin'>();
  for (const pair of text.split(',').map((p) => p.trim())) {
    if (pair === '') continue;
    const m = /^([^\s",=\\]{1,200})=(read|write|admin)$/.exec(pair);
    if (!m || map.has(m[1]!)) return null;
    map.set(m[1]!, m[2] as 'read' | 'write' | 'admin');
  }
  return map.size > 0 ? map : null;
}

/**
 * The service's whole configuration, read from the environment by one schema.
 * Every variable is documented in docs/configuration.md (test/docs.test.ts checks both ways).
 */
const envSchema = z.object({
  PORT: int(0, 65535, 7000),
  HOST: z.string().trim().min(1, 'must not be empty').default('127.0.0.1'),
  PUBLIC_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.replace(/\/+$/, '') : undefined))
    .refine((v) => v === undefined || /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(v), {
      error: 'must be an http(s) URL without query or fragment, e.g. https://hub.example.org',
    }),
  DATABASE_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), {
      error: 'must be a postgres:// or postgresql:// URL',
    }),
  DATA_DIR: z.string().trim().min(1, 'must not be empty').default('./.devstream-hub'),
  REDIS_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || isRedisUrl(v), {
      error: 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379',
    }),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  MCP_STATELESS: flag(),
  INSTANCE_NAME: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || /^[A-Za-z0-9_-]{1,32}$/.test(v), {
      error: 'must be 1 to 32 letters, digits, - or _ (e.g. r1)',
    }),
  ALLOWED_HOSTS: list,
  ALLOWED_ORIGINS: list,
  SESSION_IDLE_MINUTES: z
    .string()
    .default('30')
    .refine((v) => Number.isFinite(Number(v)) && Number(v) > 0, { error: 'must be a positive number of minutes' })
    .transform(Number),
  DEFAULT_PROJECT: z.string().trim().min(1, 'must not be empty').max(200).default('default'),
  EMBEDDING_PROVIDER: z.enum(['ollama', 'none'], { error: 'must be ollama or none' }).default('ollama'),
  OLLAMA_HOST: z
    .string()
    .trim()
    .default('http://127.0.0.1:11434')
    // Ollama's own OLLAMA_HOST may omit the scheme (`127.0.0.1:11434`).
    .transform((v) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `http://${v}`))
    .refine((v) => /^https?:\/\/[^/\s]+/.test(v), { error: 'must be an http(s) URL or host:port' }),
  OLLAMA_EMBEDDING_MODEL: z.string().trim().min(1, 'must not be empty').max(200).default('nomic-embed-text'),
  OLLAMA_TIMEOUT_MS: int(1, 600_000, 30_000),
  // The chat model of `repo {action: "analyze", summarize: true}` (issue 25); unset: no summaries on the server.
  OLLAMA_SUMMARY_MODEL: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => (v ? v : undefined)),
  OLLAMA_SUMMARY_CONCURRENCY: int(1, 64, 4),
  OLLAMA_SUMMARY_TIMEOUT_MS: int(1, 3_600_000, 120_000),
  // Weights of the branches' scores in the fused score (db/queries/memories/hybrid-search.ts):
  // 0.15 : 1 measured best on LoCoMo with GloVe and with the fake embedder (docs/benchmarks.md).
  SEARCH_VECTOR_WEIGHT: weight('0.15'),
  SEARCH_KEYWORD_WEIGHT: weight('1'),
  SEARCH_NEIGHBOR_WEIGHT: z
    .string()
    .default('0.4')
    .refine((v) => v.trim() !== '' && Number.isFinite(Number(v)) && Number(v) >= 0 && Number(v) <= 10, {
      error: 'must be a number from 0 to 10',
    })
    .transform(Number),
  GRAPH_RETENTION: int(1, 10_000, 20),
  ANALYZE_ROOTS: list.refine((roots) => (roots ?? []).every((r) => isAbsolute(r)), {
    error: 'must be absolute folder paths, comma-separated',
  }),
  AUTH: z.enum(['required', 'off'], { error: 'must be required or off' }).optional(),
  ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .refine((v) => v === undefined || v.length >= 32, {
      error: 'must be at least 32 characters (e.g. openssl rand -base64 32)',
    }),
  // OAuth 2.1 resource server (docs/oauth.md): unset OAUTH_ISSUER, none of these is read.
  // As the IdP's metadata spells its `issuer`, a trailing slash included (Auth0's has one): tokens' `iss` is compared exactly.
  OAUTH_ISSUER: optionalUrl(true),
  OAUTH_AUDIENCE: list,
  OAUTH_SCOPE_MAP: z
    .string()
    .trim()
    .default('devstream:read=read,devstream:write=write,devstream:admin=admin')
    .refine((v) => parseScopeMap(v) !== null, {
      error: 'must be comma-separated name=scope pairs, each scope read, write or admin (e.g. devstream:read=read)',
    })
    .transform((v) => parseScopeMap(v)!),
  OAUTH_SUBJECT_CLAIM: list.refine((claims) => (claims ?? []).every((c) => /^[A-Za-z0-9_:./-]{1,100}$/.test(c)), {
    error: 'must be claim names, comma-separated (e.g. email,sub)',
  }),
  OAUTH_PROJECTS_CLAIM: claimName,
  OAUTH_REPOS_CLAIM: claimName,
  OAUTH_INTROSPECTION_URL: optionalUrl(),
  OAUTH_INTROSPECTION_CLIENT_ID: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined)),
  OAUTH_INTROSPECTION_CLIENT_SECRET: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined)),
  RATE_LIMIT_MAX: int(1, 1_000_000, 600),
  RATE_LIMIT_WINDOW: z
    .string()
    .trim()
    .default('1 minute')
    .refine((v) => parseDuration(v) !== null, {
      error: "must be a duration like '1 minute', '30 seconds' or 60000 (ms)",
    })
    .transform((v) => parseDuration(v)!),
  BODY_LIMIT: size('2MB', 'must be a size like 2097152, 2MB or 512KB (at least 1KB)'),
  REQUEST_TIMEOUT_S: int(1, 86_400, 300),
  MAX_SESSIONS: int(1, 1_000_000, 1000),
  MAX_SESSIONS_PER_KEY: int(1, 1_000_000, 100),
  DB_CONNECT_TIMEOUT_S: int(0, 3_600, 60),
  SHUTDOWN_TIMEOUT_S: int(0, 3_600, 10),
  METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .refine((v) => v === undefined || v.length >= 16, { error: 'must be at least 16 characters' }),
  GRAPH_UPLOAD_LIMIT: size('256MB', 'must be a size like 268435456, 256MB or 1GB (at least 1KB)'),
  GRAPH_UPLOADS_MAX: int(1, 10_000, 4),
  GRAPH_UPLOADS_PER_KEY: int(1, 10_000, 2),
  GRAPH_UPLOAD_MIN_RATE: size('10KB', 'must be a size per second like 10240, 10KB or 1MB (at least 1KB)'),
  GRAPH_UPLOAD_RATE_WINDOW_S: int(1, 3_600, 10),
  DEVLENS_PACKET_META: flag('1'),
  DEVLENS_PACKET_CODE: flag('0'),
  DEVLENS_PACKET_ANSWER: flag('1'),
  DEVLENS_PACKET_RANKER: z.enum(['rrf', 'legacy'], { error: 'must be rrf or legacy' }).default('rrf'),
  // Claude Code hooks (POST /api/v1/hooks/claude-code): ≤ 2,500 tokens fits Claude Code's 10,000-character cap.
  HOOK_CONTEXT_TOKENS: int(100, 2_500, 1_500),
  HOOK_CAPTURE: flag('0'),
  HOOK_SESSION_TTL_HOURS: int(1, 8_760, 24),
});

/** `268435456`, `256MB`, `256 MiB`, `1GB` → bytes (binary units); null when unreadable or under 1 KiB. */
export function parseBytes(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?\s*$/i.exec(text);
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase()[0]!;
  const bytes = Math.floor(
    Number(m[1]) * ({ b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 } as Record<string, number>)[unit]!,
  );
  return Number.isSafeInteger(bytes) && bytes >= 1024 ? bytes : null;
}

/** `60000` (ms), `30 seconds`, `1 minute`, `2 hours`, `1 day` → milliseconds; null when unreadable or zero. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?)?\s*$/i.exec(
    text,
  );
  if (!m) return null;
  const unit = (m[2] ?? 'ms').toLowerCase();
  const scale =
    unit.startsWith('ms') || unit.startsWith('milli')
      ? 1
      : unit.startsWith('s')
        ? 1000
        : unit.startsWith('m')
          ? 60_000
          : unit.startsWith('h')
            ? 3_600_000
            : 86_400_000;
  const ms = Math.round(Number(m[1]) * scale);
  return Number.isSafeInteger(ms) && ms >= 1 ? ms : null;
}

/** Every environment variable the service reads (each is documented in docs/configuration.md). */
export const ENV_VARS = Object.keys(envSchema.shape);

/** Variables whose values must never appear in a message or a log line. */
const SECRET_VARS = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'ADMIN_TOKEN',
  'METRICS_TOKEN',
  'OAUTH_INTROSPECTION_CLIENT_SECRET',
]);

/** How long the issuer's keys are not refetched after a fetch (jose's cooldown): an unknown `kid` buys no more. */
const JWKS_COOLDOWN_MS = 30_000;

/** The environment as the service uses it: the one schema's output, renamed for code. */
const configSchema = envSchema
  .superRefine((e, ctx) => {
    if (e.AUTH === 'off' && !isLoopbackHost(e.HOST)) {
      ctx.addIssue({
        code: 'custom',
        path: ['AUTH'],
        message: `off is refused when HOST (${e.HOST}) is reachable from other machines: use AUTH=required with API keys, or HOST=127.0.0.1`,
      });
    }
    if (e.OAUTH_ISSUER !== undefined) {
      if (e.PUBLIC_URL === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['PUBLIC_URL'],
          message: `is required when OAUTH_ISSUER is set: it is the resource id tokens must be issued for (e.g. https://hub.example.org)`,
        });
      if (e.AUTH === 'off')
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH'],
          message: 'off contradicts OAUTH_ISSUER (tokens would be ignored): unset AUTH, or unset OAUTH_ISSUER',
        });
    }
    if (
      e.OAUTH_INTROSPECTION_URL !== undefined &&
      (e.OAUTH_INTROSPECTION_CLIENT_ID === undefined || e.OAUTH_INTROSPECTION_CLIENT_SECRET === undefined)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['OAUTH_INTROSPECTION_URL'],
        message:
          'needs OAUTH_INTROSPECTION_CLIENT_ID and OAUTH_INTROSPECTION_CLIENT_SECRET (the hub authenticates to the introspection endpoint)',
      });
    }
  })
  .transform((e) => ({
    port: e.PORT,
    host: e.HOST,
    /** The URL clients reach the service at, as the OpenAPI document's server. Unset: the address it listens on. */
    publicUrl: e.PUBLIC_URL,
    /** Unset: embedded PGlite in `dataDir`. */
    databaseUrl: e.DATABASE_URL,
    dataDir: resolve(e.DATA_DIR),
    /** Set: rate limits are counted in this Redis, shared by every instance using it. Unset: per instance. */
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    mcpStateless: e.MCP_STATELESS,
    /**
     * This replica's name: the prefix of its MCP session ids (`r1.<uuid>`), so a load balancer can
     * send a 2025-era session's requests to the replica that holds it (docs/replicas.md). Unset: none.
     */
    instanceName: e.INSTANCE_NAME,
    /** Unset: the loopback names with the listening port. */
    allowedHosts: e.ALLOWED_HOSTS,
    /** Unset: http(s) origins of the loopback names with the listening port. */
    allowedOrigins: e.ALLOWED_ORIGINS,
    sessionIdleMs: e.SESSION_IDLE_MINUTES * 60_000,
    defaultProject: e.DEFAULT_PROJECT,
    embedding: {
      provider: e.EMBEDDING_PROVIDER,
      ollamaHost: e.OLLAMA_HOST.replace(/\/+$/, ''),
      model: e.OLLAMA_EMBEDDING_MODEL,
      timeoutMs: e.OLLAMA_TIMEOUT_MS,
    },
    /** The chat model server-side analysis writes summaries with (`summarize: true`); no model: none are written. */
    summaries: {
      model: e.OLLAMA_SUMMARY_MODEL,
      ollamaHost: e.OLLAMA_HOST.replace(/\/+$/, ''),
      /** Requests to the model at once. */
      concurrency: e.OLLAMA_SUMMARY_CONCURRENCY,
      /** Per node, from sending to the last byte of the answer. */
      timeoutMs: e.OLLAMA_SUMMARY_TIMEOUT_MS,
    },
    /** Weights of the two search branches' scores in the fused score. */
    searchWeights: {
      vector: e.SEARCH_VECTOR_WEIGHT,
      keyword: e.SEARCH_KEYWORD_WEIGHT,
      neighbours: e.SEARCH_NEIGHBOR_WEIGHT,
    },
    auth: {
      /**
       * Default: off only when nothing but this machine can reach the service — a loopback HOST and no
       * other name in ALLOWED_HOSTS (a reverse proxy on the same machine forwards the world's requests).
       */
      mode:
        e.AUTH ??
        (e.OAUTH_ISSUER === undefined &&
        isLoopbackHost(e.HOST) &&
        (e.ALLOWED_HOSTS ?? []).every((h) => isLoopbackHost(h.replace(/:\d+$/, '')))
          ? 'off'
          : 'required'),
      /** A bootstrap credential with every scope (for creating the first keys). */
      adminToken: e.ADMIN_TOKEN,
      /** Access tokens of the team's identity provider, beside the API keys; unset: OAuth is off. */
      oauth:
        e.OAUTH_ISSUER === undefined || e.PUBLIC_URL === undefined
          ? undefined
          : {
              issuer: e.OAUTH_ISSUER,
              /** This protected resource's id (RFC 9728 `resource`): PUBLIC_URL. */
              resource: e.PUBLIC_URL,
              /** A token's `aud` must hold one of these (RFC 8707). */
              audiences: e.OAUTH_AUDIENCE ?? [e.PUBLIC_URL, `${e.PUBLIC_URL}/mcp`],
              scopeMap: e.OAUTH_SCOPE_MAP,
              /** The first of these claims a token has names the caller (created_by). */
              subjectClaims: e.OAUTH_SUBJECT_CLAIM ?? ['email', 'sub'],
              projectsClaim: e.OAUTH_PROJECTS_CLAIM,
              reposClaim: e.OAUTH_REPOS_CLAIM,
              introspection:
                e.OAUTH_INTROSPECTION_URL === undefined
                  ? undefined
                  : {
                      url: e.OAUTH_INTROSPECTION_URL,
                      clientId: e.OAUTH_INTROSPECTION_CLIENT_ID ?? '',
                      clientSecret: e.OAUTH_INTROSPECTION_CLIENT_SECRET ?? '',
                    },
              jwksCooldownMs: JWKS_COOLDOWN_MS,
            },
    } as { mode: 'required' | 'off'; adminToken: string | undefined; oauth?: OAuthConfig | undefined },
    limits: {
      /** Requests per key (per client address when AUTH=off) per window. */
      rateLimitMax: e.RATE_LIMIT_MAX,
      rateLimitWindowMs: e.RATE_LIMIT_WINDOW,
      /** Largest JSON body, bytes. */
      bodyLimit: e.BODY_LIMIT,
      /** Time to receive a whole request. */
      requestTimeoutMs: e.REQUEST_TIMEOUT_S * 1000,
      /** Open MCP sessions; the least recently used one is closed to make room. */
      maxSessions: e.MAX_SESSIONS,
      /**
       * Open MCP sessions of one key (of one client address when AUTH=off), at most MAX_SESSIONS:
       * a key at its cap that opens one more loses its own least recently used session.
       */
      maxSessionsPerKey: Math.min(e.MAX_SESSIONS_PER_KEY, e.MAX_SESSIONS),
    },
    /** How long start-up waits for the database (retrying with backoff) before giving up; 0: try once. */
    dbConnectTimeoutMs: e.DB_CONNECT_TIMEOUT_S * 1000,
    /** How long a shutdown waits for requests in flight before cutting their connections. */
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_S * 1000,
    /** Unset: /metrics needs an admin key (or nothing with AUTH=off); set: exactly this bearer token. */
    metricsToken: e.METRICS_TOKEN,
    graphs: {
      /** Commits kept per graph; older ones are dropped when a newer one is uploaded. */
      retention: e.GRAPH_RETENTION,
      /** Largest graph upload, in bytes, before and after decompression. */
      uploadLimit: e.GRAPH_UPLOAD_LIMIT,
      /** Folders `repo {action: "analyze", path}` may read (none: analysis on the server is off). */
      analyzeRoots: e.ANALYZE_ROOTS ?? [],
    },
    graphUploads: {
      /** Uploads in flight at once on this instance (receiving or storing), in all and per key (per client address when AUTH=off). */
      max: e.GRAPH_UPLOADS_MAX,
      perKey: e.GRAPH_UPLOADS_PER_KEY,
      /** Bytes per second an upload's body must keep up, averaged over each window. */
      minRate: e.GRAPH_UPLOAD_MIN_RATE,
      rateWindowMs: e.GRAPH_UPLOAD_RATE_WINDOW_S * 1000,
    },
    /** Claude Code hooks (src/domain/hooks). */
    hooks: {
      /** Budget of one hook answer's context, in tokens (chars / 4). */
      contextTokens: e.HOOK_CONTEXT_TOKENS,
      /** Store each session's files and task changes as one `context` memory when it ends. */
      capture: e.HOOK_CAPTURE,
      /** How long a session's dedup records and capture are kept after its last hook. */
      sessionTtlMs: e.HOOK_SESSION_TTL_HOURS * 3_600_000,
    },
    /** What a resolve_context packet shows (spec "Packet content toggles"). */
    packet: {
      /** The per-node `meta:` segment (visibility, kind, signature, return type). */
      meta: e.DEVLENS_PACKET_META,
      /** The CODE section for the top nodes; a call's `code` argument overrides it. */
      code: e.DEVLENS_PACKET_CODE,
      /** The ANSWER, WHAT and CONFIDENCE lines (off: diagnosis of the ranking alone). */
      answer: e.DEVLENS_PACKET_ANSWER,
      /** `legacy`: the pre-fusion additive ranking (diagnostic). */
      ranker: e.DEVLENS_PACKET_RANKER,
    },
  }));

export type Config = z.output<typeof configSchema>;

/** The OAuth resource server's settings (OAUTH_*, PUBLIC_URL; docs/oauth.md). */
export interface OAuthConfig {
  issuer: string;
  resource: string;
  audiences: readonly string[];
  scopeMap: ReadonlyMap<string, 'read' | 'write' | 'admin'>;
  subjectClaims: readonly string[];
  projectsClaim: string | undefined;
  /** A claim naming the code graphs (repos) a token may see; unset: every graph. */
  reposClaim?: string | undefined;
  introspection: { url: string; clientId: string; clientSecret: string } | undefined;
  /** Least time between two fetches of the issuer's JWKS (an unknown `kid` refetches once it has passed). */
  jwksCooldownMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses the environment. On any bad value throws one ConfigError naming every bad variable
 * (and the value, unless the variable holds a secret).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(pickKnown(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '?');
      const value = env[name];
      const shown = SECRET_VARS.has(name) || value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
      return `  ${name}: ${issue.message}${shown}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

function pickKnown(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const key of ENV_VARS) out[key] = env[key];
  return out;
}

/** A redis:// or rediss:// URL with a host (what ioredis connects to). */
function isRedisUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
