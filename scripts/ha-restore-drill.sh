#!/usr/bin/env bash
# The restore drill (scripts/ha-restore-drill.py): brings up the loopback HA cluster (scripts/ha-cluster.sh), takes a
# base backup, restores it to a point in time from the WAL archive on a fresh node, checks which rows are there, and
# has a device notice the older server and republish its state; then takes the cluster down.
# Needs the debug build (swift build) and what ha-cluster.sh needs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export COFFER_HA_DIR="${COFFER_HA_DIR:-$(mktemp -d /tmp/coffer-ha-drill.XXXXXX)}"
cleanup() {
  if [ -f "$COFFER_HA_DIR/drill-restored/postmaster.pid" ]; then
    pid="$(head -n 1 "$COFFER_HA_DIR/drill-restored/postmaster.pid")"
    kill -QUIT "$pid" 2>/dev/null || true
  fi
  FAST=1 WIPE=$([ "${COFFER_HA_KEEP:-0}" = 1 ] && echo 0 || echo 1) "$root/scripts/ha-cluster.sh" down || true
}
trap cleanup EXIT
"$root/scripts/ha-cluster.sh" up
"$root/scripts/ha-restore-drill.py"
