#!/bin/sh
# A private Secret Service for tests: a D-Bus session bus (dbus-run-session) with gnome-keyring-daemon's secrets
# component, its login keyring created and unlocked with a throwaway password, in a throwaway HOME. Writes the bus
# address to $1 once org.freedesktop.secrets answers, then runs until its standard input closes; the bus, the daemon
# and the throwaway directories go with it.
#   usage: scripts/keyring-session.sh READY_FILE < pipe
set -eu
ready=$1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/coffer-keyring.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -m 0700 "$scratch/home" "$scratch/runtime"
export HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/runtime" READY="$ready"
# The daemon runs in the foreground as a child of this session, so that it is stopped and reaped here (a daemonized
# one outlives the session as an orphan).
dbus-run-session -- sh -c '
  printf %s "throwaway keyring password" | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
  daemon=$!
  gdbus wait --session --timeout 10 org.freedesktop.secrets
  printf %s "$DBUS_SESSION_BUS_ADDRESS" > "$READY.tmp" && mv "$READY.tmp" "$READY"
  cat >/dev/null
  kill $daemon
  wait $daemon || true'
