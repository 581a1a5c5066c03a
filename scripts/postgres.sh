#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL cluster for coffer-server's tests, in DIR, on 127.0.0.1.
#
#   scripts/postgres.sh start DIR   # prints COFFER_TEST_POSTGRES_URL=…, …_ADMIN_URL=… and …_MAINTENANCE_URL=…
#   scripts/postgres.sh stop DIR
#
# Use it as `export $(scripts/postgres.sh start "$dir")`. The port is $COFFER_PG_PORT (default 54329). Nothing is
# installed here: PostgreSQL's server binaries must already be there (Debian: `apt-get install -y postgresql`).
#
# The cluster has database `coffer` owned by `coffer_owner` (runs migrations, owns the tables) and a login role
# `coffer_app` that serves requests: not a superuser, no BYPASSRLS, owns nothing, so row-level security applies to
# it; and a login role `coffer_maintenance` for the work that spans users (purge, the whole audit log), to which
# `migrate()` grants those functions when it is named. Authentication is `trust`: the cluster listens on loopback
# only and holds nothing but test data.
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user (runuser); as any other user it
# belongs to that user.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action="$1"
dir="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
port="${COFFER_PG_PORT:-54329}"
case "$port" in
  '' | *[!0-9]*) echo "postgres.sh: COFFER_PG_PORT must be a port number" >&2; exit 2 ;;
esac

pgbin=""
for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then
    pgbin="$candidate"
    break
  fi
done
if [ -z "$pgbin" ]; then
  for tool in initdb pg_ctl psql; do
    command -v "$tool" >/dev/null || { echo "postgres.sh: PostgreSQL's $tool is missing (Debian: apt-get install -y postgresql)" >&2; exit 1; }
  done
  pgbin="$(dirname "$(command -v initdb)")"
fi
psql_bin="$pgbin/psql"
[ -x "$psql_bin" ] || psql_bin="$(command -v psql)"

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

data="$dir/data"
log="$dir/server.log"

case "$action" in
  start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    data="$dir/data"
    log="$dir/server.log"
    if [ "$(id -u)" = 0 ]; then
      id postgres >/dev/null 2>&1 || { echo "postgres.sh: there is no 'postgres' user (Debian: apt-get install -y postgresql)" >&2; exit 1; }
      chown postgres:postgres "$dir"
      chmod 700 "$dir"
      as_owner test -w "$dir" || { echo "postgres.sh: user postgres cannot write $dir (a parent directory is closed to it); use a directory under /tmp" >&2; exit 1; }
    fi
    if [ ! -f "$data/PG_VERSION" ]; then
      as_owner "$pgbin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if ! as_owner "$pgbin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      as_owner "$pgbin/pg_ctl" -D "$data" -l "$log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c max_connections=300" start >/dev/null \
        || { cat "$log" >&2; exit 1; }
    fi
    # Roles and database (shared with the HA cluster's bootstrap); every statement is guarded, so `start` can run again.
    as_owner "$psql_bin" -X -q -h "$dir" -p "$port" -U postgres -d postgres <"$root/contrib/postgres/coffer-roles.sql" >/dev/null
    echo "COFFER_TEST_POSTGRES_URL=postgres://coffer_app@127.0.0.1:$port/coffer"
    echo "COFFER_TEST_POSTGRES_ADMIN_URL=postgres://coffer_owner@127.0.0.1:$port/coffer"
    echo "COFFER_TEST_POSTGRES_MAINTENANCE_URL=postgres://coffer_maintenance@127.0.0.1:$port/coffer"
    ;;
  stop)
    if [ -f "$data/PG_VERSION" ] && as_owner "$pgbin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      as_owner "$pgbin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null
    fi
    ;;
  *) usage ;;
esac
