#!/usr/bin/env bash
# Runs the shared peer benchmark (../shared/bench, see its README) with
# mx-claw in it: builds the binary, then runs the scripted 20- and 200-step
# tasks against the fake model, side by side with whichever peers are
# installed (PEERS=mxclaw for mx-claw alone).
#
# usage: scripts/bench-peers.sh [RUNS]      (env as bench/run-peers.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$ROOT/../shared/bench}
BIN_DIR=$(mktemp -d)
trap 'rm -rf "$BIN_DIR"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN_DIR/mx-claw" "$ROOT/cmd/mx-claw"
export PATH="$BIN_DIR:$PATH"
# The fake provider is "bench" in the run's private home, written on the
# first (warm-up) run like the peers' config files; the key travels in
# MX_CLAW_API_KEY_BENCH, never in the config file.
export MXCLAW_CMD='[ -f "$HOME/.mx-claw/config.json" ] || { mkdir -p "$HOME/.mx-claw" && printf '"'"'{"version":1,"activeProvider":"bench","providers":{"bench":{"kind":"custom","baseURL":"%s","model":"%s","models":["%s"],"requiresApiKey":true,"configured":true}}}'"'"' "$OPENAI_BASE_URL" "$BENCH_MODEL" "$BENCH_MODEL" > "$HOME/.mx-claw/config.json"; } && MX_CLAW_API_KEY_BENCH="$OPENAI_API_KEY" exec '"$BIN_DIR"'/mx-claw run --yolo --max-iterations 1000 "$BENCH_PROMPT"'
export MXCLAW_VERSION_CMD="$BIN_DIR/mx-claw version"
export PEERS=${PEERS:-mxclaw}
exec "$BENCH/run-peers.sh" "$@"
