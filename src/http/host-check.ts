import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { AppError, validationError } from '../errors.js';
import { sendError } from './errors.js';
import { isOpen } from './open-routes.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * A Host header (RFC 9110 §7.2: uri-host [ ":" port ]): a DNS name or IPv4 address (letters,
 * digits, `-`, `_`, `.`) or a bracketed IPv6 address, then an optional port of 1–5 digits.
 */
const HOST_HEADER = /^((?:[a-z0-9_-]+\.)*[a-z0-9_-]+\.?|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

export interface HostCheckOptions {
  /** `host` (any port) or `host:port`; `*` allows any. Unset: the loopback names with the listening port. */
  allowedHosts: string[] | undefined;
  /** Full origins (`http://localhost:7000`); `*` allows any. Unset: loopback origins with the listening port. */
  allowedOrigins: string[] | undefined;
}

/**
 * DNS-rebinding protection for every route (MCP and REST alike): a request whose Host, or Origin
 * when present, is not on the allowed lists gets 403 before any handler runs.
 */
export function registerHostCheck(app: FastifyInstance, options: HostCheckOptions): void {
  let hosts: Set<string> | undefined;
  let origins: Set<string> | undefined;
  const lists = () => {
    if (!hosts || !origins) {
      const port = (app.server.address() as AddressInfo | null)?.port;
      const defaults = LOOPBACK_NAMES.map((name) => `${name}:${port}`);
      hosts = new Set((options.allowedHosts ?? defaults).map((h) => h.toLowerCase()));
      origins = new Set(
        (options.allowedOrigins ?? defaults.flatMap((d) => [`http://${d}`, `https://${d}`])).map((o) =>
          o.toLowerCase().replace(/\/$/, ''),
        ),
      );
    }
    return { hosts, origins };
  };

  app.addHook('onRequest', async (request, reply) => {
    // Probes and Prometheus (with METRICS_TOKEN) address the container by IP.
    if (isOpen(request)) return;
    const { hosts, origins } = lists();
    const host = (request.headers.host ?? '').toLowerCase();
    // One name (or a bracketed IPv6 address) and at most one port: `127.0.0.1:7201:7201` is no host;
    // and a URL's host at that (no port past 65535, no IPv4 part past 255): one a client could have dialled.
    const parsed = HOST_HEADER.exec(host);
    if (!parsed || !URL.canParse(`http://${host}/`)) {
      return sendError(
        reply,
        validationError([
          { field: '(header) host', message: `"${host.slice(0, 100)}" is not a host name with an optional :port` },
        ]),
      );
    }
    const hostname = parsed[1]!;
    if (!(hosts.has('*') || hosts.has(host) || hosts.has(hostname))) {
      return sendError(reply, new AppError('FORBIDDEN', `Host "${host}" is not allowed (see ALLOWED_HOSTS)`));
    }
    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined && !(origins.has('*') || origins.has(origin))) {
      return sendError(reply, new AppError('FORBIDDEN', `Origin "${origin}" is not allowed (see ALLOWED_ORIGINS)`));
    }
  });
}
