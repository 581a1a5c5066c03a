#!/usr/bin/env bash
# The failover test (scripts/ha-chaos.py): brings up the loopback HA cluster (scripts/ha-cluster.sh), runs Coffer
# clients through it while faults are injected, checks that nothing acknowledged was lost, and takes the cluster down.
#
#   scripts/ha-chaos.sh [--rounds N] [--faults kill-postgres,freeze,stop-patroni,machine-loss,restart-server]
#
# COFFER_HA_SYNCHRONOUS=off runs it with asynchronous replication, to show what synchronous replication is for.
# The report (JSON) is written to $COFFER_HA_REPORT (default: standard output); the summary goes to standard error.
# Needs the debug build (swift build) and what ha-cluster.sh needs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export COFFER_HA_DIR="${COFFER_HA_DIR:-$(mktemp -d /tmp/coffer-ha-chaos.XXXXXX)}"
# Every client of this test has the same address and syncs back to back, far past the per-minute request limits
# meant for people; access tokens last a minute, so that every device refreshes its session several times, faults
# included.
export COFFER_HA_SERVER_ARGS="${COFFER_HA_SERVER_ARGS:---requests-per-minute 100000 --address-requests-per-minute 100000 --access-token-lifetime 60}"
# COFFER_HA_KEEP=1 keeps the directory (logs, data) for a look afterwards.
cleanup() { FAST=1 WIPE=$([ "${COFFER_HA_KEEP:-0}" = 1 ] && echo 0 || echo 1) "$root/scripts/ha-cluster.sh" down || true; }
trap cleanup EXIT
"$root/scripts/ha-cluster.sh" up
if [ -n "${COFFER_HA_REPORT:-}" ]; then
  "$root/scripts/ha-chaos.py" "$@" >"$COFFER_HA_REPORT"
else
  "$root/scripts/ha-chaos.py" "$@"
fi
