#!/usr/bin/env bash
# Runs every coffer-bench subcommand once with --smoke (each measurement briefly, on small inputs), so that a bench
# that no longer runs fails CI rather than the next person who measures. The figures of a smoke run mean nothing:
# real measurements are release builds (`swift build -c release`) run by hand, as the README's figures were.
#
#   scripts/bench-smoke.sh [CONFIGURATION]     # debug (default) or release
#
# The server and places benches start a throwaway PostgreSQL cluster with scripts/postgres.sh (as root) unless
# COFFER_BENCH_POSTGRES_URL and COFFER_BENCH_POSTGRES_ADMIN_URL name one; they use wrk and pgbench when installed.
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${1:-debug}
swift build -c "$configuration" --product coffer-bench >/dev/null
swift build -c "$configuration" --product coffer >/dev/null
swift build -c "$configuration" --product coffer-full >/dev/null
bin=$(swift build -c "$configuration" --show-bin-path)

# Each bench's own output goes to a log that is printed only when it fails.
log=$(mktemp /tmp/coffer-bench-smoke.XXXXXX)
trap 'rm -f "$log"' EXIT
failed=()
for bench in vault barcode sync cli agent keystore scan server places; do
  start=$(date +%s)
  if timeout 600 "$bin/coffer-bench" "$bench" --smoke >"$log" 2>&1; then
    echo "bench-smoke: $bench passed in $(($(date +%s) - start)) s"
  else
    status=$?
    echo "bench-smoke: $bench FAILED (exit $status) after $(($(date +%s) - start)) s; its output:" >&2
    sed 's/^/  /' "$log" >&2
    failed+=("$bench")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench-smoke: failed: ${failed[*]}" >&2
  exit 1
fi
