#!/usr/bin/env bash
# Runs scripts/benchfloor in the shared peer benchmark (../shared/bench) in
# the place of an agent: its "1st request" and "step gap" columns are the
# harness's and the fake server's own cost on this machine, the floor under
# any agent's figures. (Its task check fails: it changes no file.)
#
# usage: scripts/bench-floor.sh [RUNS]      (env as bench/run-peers.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$ROOT/../shared/bench}
BIN_DIR=$(mktemp -d)
trap 'rm -rf "$BIN_DIR"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN_DIR/benchfloor" "$ROOT/scripts/benchfloor"
export MXCLAW_CMD="exec $BIN_DIR/benchfloor"
export PEERS=mxclaw
exec "$BENCH/run-peers.sh" "$@"
