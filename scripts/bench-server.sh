#!/usr/bin/env bash
# Sync-server speed (issue #4): builds coffer-bench in release and runs `coffer-bench server` with the arguments given
# (--seconds N, --clients N, --backend sqlite|postgres|all).
#
# PostgreSQL: set COFFER_BENCH_POSTGRES_URL and COFFER_BENCH_POSTGRES_ADMIN_URL (app role, owner role), or the
# COFFER_TEST_POSTGRES_* pair that scripts/postgres.sh prints; without either the bench starts a throwaway cluster with
# scripts/postgres.sh itself. pgbench (the raw baseline) and the server binaries come from Debian's `postgresql`.
# COFFER_BENCH_SCRATCH picks the build directory (default .build).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${COFFER_BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product coffer-bench
exec "$scratch/release/coffer-bench" server "$@"
