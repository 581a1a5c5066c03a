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
dbus-run-session -- sh -c '
  printf %s "throwaway keyring password" | gnome-keyring-daemon --daemonize --unlock --components=secrets >/dev/null
  gdbus wait --session --timeout 10 org.freedesktop.secrets
  printf %s "$DBUS_SESSION_BUS_ADDRESS" > "$READY.tmp" && mv "$READY.tmp" "$READY"
  cat >/dev/null'
