# devstream-hub image: compiled JavaScript on Node 20, run as the unprivileged `node` user.
#   docker build -t devstream-hub .
#   docker run --rm -p 127.0.0.1:7000:7000 -v devstream-data:/data devstream-hub
# Without DATABASE_URL it uses embedded PGlite in /data; docker-compose.yml runs it on Postgres.

# ---- build: TypeScript (src/) -> JavaScript (dist/) ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: tsc needs none, and the dev-only native addons (ssh2, cpu-features,
# via testcontainers) would try node-gyp, which this slim image cannot run.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The dashboard (web/) is typed from the OpenAPI document and bundled by Vite into web/dist.
COPY openapi ./openapi
COPY web ./web
RUN npm run build

# ---- runtime ----
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts here either: the only runtime package with one is tree-sitter-python, whose
# native binding we never load (the analyzer uses its .wasm grammar through web-tree-sitter).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# Layout matters: dist/db/migrate.js reads ../../migrations, dist/version.js reads ../package.json.
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY migrations ./migrations
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data

# HOST: listen on every interface of the container's own network; publish the port on the
# host's loopback only (`-p 127.0.0.1:7000:7000`) unless the service is meant for a team.
# DATA_DIR: embedded PGlite's files; unused when DATABASE_URL is set.
# ALLOWED_HOSTS must list every Host name clients use (others get 403). An entry without a
# port matches any port, so these loopback names keep working if the published port changes;
# add e.g. `hub.example.internal` (or `hub.example.internal:7000`) to serve other names.
# ALLOWED_ORIGINS (browsers only) defaults to the loopback origins with PORT.
# Listening beyond the container's loopback means AUTH=required: pass ADMIN_TOKEN (-e) to create
# the first API keys over REST.
ENV HOST=0.0.0.0 \
    PORT=7000 \
    DATA_DIR=/data \
    ALLOWED_HOSTS="localhost,127.0.0.1,[::1]"
VOLUME ["/data"]
USER node
EXPOSE 7000
# /healthz is exempt from the Host check. No curl in slim images: use Node's global fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 7000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
