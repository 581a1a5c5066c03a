#!/usr/bin/env bash
# A highly available Coffer on loopback, for tests and trials: three PostgreSQL nodes under Patroni (leader election
# in one etcd member, synchronous replication, pg_rewind), HAProxy routing to the primary, and two coffer-servers on
# the one database. The configuration files are contrib/ha's, filled in for 127.0.0.1.
#
#   scripts/ha-cluster.sh up        # start everything and wait until a primary is writable through HAProxy
#   scripts/ha-cluster.sh status    # members, roles, timelines and lag; the servers' /health
#   scripts/ha-cluster.sh env       # COFFER_HA_SYNC_URL=… (HAProxy in front of both servers) and more, for clients
#   scripts/ha-cluster.sh leader    # the primary's node name (pg1, pg2 or pg3)
#   scripts/ha-cluster.sh pid postgres|patroni NODE, pid server 1|2
#   scripts/ha-cluster.sh start-node NODE | start-server 1|2 | stop-server 1|2
#   scripts/ha-cluster.sh down      # stop everything (FAST=1: SIGKILL, for throwaway runs; WIPE=1: delete the directory)
#
# Settings (environment): COFFER_HA_DIR (default /tmp/coffer-ha), COFFER_HA_PORT_OFFSET (added to every port below),
# COFFER_HA_SYNCHRONOUS (on|off, default on), COFFER_HA_TTL (leader lease, default and least 20 s), COFFER_HA_SERVER (the
# coffer-server binary; default .build/debug/coffer-server), COFFER_HA_SERVER_ARGS (more `serve` options, split on
# spaces), COFFER_HA_VENV (Patroni's virtual environment).
# Ports: etcd 23790/23800; PostgreSQL 54321-54323; Patroni's REST API 8011-8013; HAProxy 5000 (primary), 5001
# (replicas), 7000 (stats), 8450 (the coffer-servers, for clients); coffer-server 8451 and 8452.
#
# PostgreSQL, etcd and HAProxy come from Debian (apt-get install postgresql etcd-server etcd-client haproxy);
# Patroni from PyPI, pinned in contrib/ha/requirements.txt, in a virtual environment of its own (not Debian 12's
# patroni 3.0.2: see the README). PostgreSQL refuses to run as root, so as root every daemon but the coffer-servers
# runs as the `postgres` user. Passwords are made per cluster in $COFFER_HA_DIR/secrets (0700) and reach programs
# through files and the environment, never their command lines.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${COFFER_HA_DIR:-/tmp/coffer-ha}"
offset="${COFFER_HA_PORT_OFFSET:-0}"
synchronous="${COFFER_HA_SYNCHRONOUS:-on}"
ttl="${COFFER_HA_TTL:-20}"
case "$offset" in '' | *[!0-9]*) echo "ha-cluster.sh: COFFER_HA_PORT_OFFSET must be a number" >&2; exit 2 ;; esac
# Patroni (>= 3) takes no leader lease under 20 s: it would run with 20 whatever it was given.
case "$ttl" in '' | *[!0-9]*) echo "ha-cluster.sh: COFFER_HA_TTL must be a number of seconds" >&2; exit 2 ;; esac
[ "$ttl" -ge 20 ] || { echo "ha-cluster.sh: COFFER_HA_TTL must be at least 20 (Patroni's shortest leader lease)" >&2; exit 2; }
case "$synchronous" in on) sync_mode=true ;; off) sync_mode=false ;; *) echo "ha-cluster.sh: COFFER_HA_SYNCHRONOUS must be on or off" >&2; exit 2 ;; esac

nodes=(pg1 pg2 pg3)
etcd_client=$((23790 + offset))
etcd_peer=$((23800 + offset))
haproxy_primary=$((5000 + offset))
haproxy_replicas=$((5001 + offset))
haproxy_stats=$((7000 + offset))
haproxy_sync=$((8450 + offset))
pg_port() { echo $((54320 + ${1#pg} + offset)); }
rest_port() { echo $((8010 + ${1#pg} + offset)); }
server_port() { echo $((8450 + $1 + offset)); }

patroni_version="$(sed -n 's/^patroni\[etcd3\]==//p' "$root/contrib/ha/requirements.txt")"
if [ "$(id -u)" = 0 ]; then
  venv="${COFFER_HA_VENV:-/var/cache/coffer-ha/patroni-$patroni_version}"
else
  venv="${COFFER_HA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/coffer/patroni-$patroni_version}"
fi

die() { echo "ha-cluster.sh: $*" >&2; exit 1; }

# Runs a command as the daemons' user.
as_daemon() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pgbin=""
for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  if [ -x "$candidate/postgres" ] && [ -x "$candidate/pg_rewind" ]; then pgbin="$candidate"; break; fi
done

secret() { cat "$dir/secrets/$1.password"; }

# The PID in a pid file, if that process is alive.
live_pid() {
  local file="$1" pid
  [ -f "$file" ] || return 1
  pid="$(head -n 1 "$file" 2>/dev/null || true)"
  case "$pid" in '' | *[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Starts a daemon detached, as the daemons' user, its output appended to a log and its own PID (not runuser's: runuser
# forwards a SIGTERM and SIGKILLs its child 2 s later, which orphaned daemons) in a pid file.
start_daemon() {
  local name="$1"; shift
  local env_assignments=()
  while [ "${1:-}" != "--" ]; do env_assignments+=("$1"); shift; done
  shift
  local command
  command="$(printf '%q ' "$@")"
  as_daemon env "${env_assignments[@]}" bash -c "setsid $command >>'$dir/logs/$name.log' 2>&1 </dev/null & echo \$! >'$dir/pids/$name.pid'"
}

wait_until() {
  local seconds="$1" what="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || die "$what did not happen within $seconds s (logs: $dir/logs)"
    sleep 0.2
  done
}

# The cluster as Patroni's REST API on any live node sees it (JSON), or nothing.
cluster_json() {
  local node
  for node in "${nodes[@]}"; do
    curl -fsS --max-time 1 "http://127.0.0.1:$(rest_port "$node")/cluster" 2>/dev/null && return 0
  done
  return 1
}

cluster_ready() {
  local expected_sync="$1"
  cluster_json | /usr/bin/python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
leaders = [m for m in members if m["role"] == "leader" and m["state"] == "running"]
streaming = [m for m in members if m["role"] != "leader" and m["state"] == "streaming"]
sync = [m for m in members if m["role"] == "sync_standby"]
ok = len(leaders) == 1 and len(streaming) == 2 and (len(sync) >= 1 or sys.argv[1] != "true")
sys.exit(0 if ok else 1)' "$expected_sync"
}

writable() {
  PGPASSWORD="$(secret coffer_owner)" PGCONNECT_TIMEOUT=1 "$pgbin/psql" -X -At -h 127.0.0.1 -p "$haproxy_primary" \
    -U coffer_owner -d coffer -c 'SELECT NOT pg_is_in_recovery()' 2>/dev/null | grep -qx t
}

server_healthy() {
  curl -fsS --max-time 1 "http://127.0.0.1:$(server_port "$1")/health" >/dev/null
}

server_binary() {
  local binary="${COFFER_HA_SERVER:-$root/.build/debug/coffer-server}"
  [ -x "$binary" ] || die "no coffer-server at $binary (swift build --product coffer-server, or set COFFER_HA_SERVER)"
  echo "$binary"
}

fill() {
  # fill TEMPLATE OUT KEY=VALUE…: replaces each @KEY@ with VALUE. The pairs reach Python on its standard input, each
  # ended by a NUL (printf is the shell's own), never on a command line: some are passwords.
  local template="$1" out="$2"; shift 2
  printf '%s\0' "$@" | /usr/bin/python3 -c '
import re, sys
template, out = sys.argv[1], sys.argv[2]
text = open(template).read()
for pair in sys.stdin.read().split("\0"):
    if pair:
        key, value = pair.split("=", 1)
        text = text.replace("@" + key + "@", value)
missing = sorted(set(re.findall(r"@([A-Z_]+)@", text)))
if missing:
    sys.exit("ha-cluster.sh: unfilled placeholders in %s: %s" % (template, ", ".join(missing)))
open(out, "w").write(text)
' "$template" "$out"
}

install_patroni() {
  if [ -x "$venv/bin/patroni" ] && [ "$("$venv/bin/patroni" --version 2>/dev/null)" = "patroni $patroni_version" ]; then
    return
  fi
  echo "ha-cluster.sh: installing Patroni $patroni_version into $venv" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  /usr/bin/python3 -m venv "$venv" || die "cannot make a virtual environment (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/contrib/ha/requirements.txt" \
    || die "pip could not install contrib/ha/requirements.txt"
  chmod -R a+rX "$venv"
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

up() {
  [ -n "$pgbin" ] || die "PostgreSQL's server binaries are missing (Debian: apt-get install postgresql)"
  for tool in etcd etcdctl haproxy curl; do
    command -v "$tool" >/dev/null || die "$tool is missing (Debian: apt-get install etcd-server etcd-client haproxy curl)"
  done
  if [ "$(id -u)" = 0 ]; then id postgres >/dev/null 2>&1 || die "there is no 'postgres' user (Debian: apt-get install postgresql)"; fi
  if live_pid "$dir/pids/etcd.pid" >/dev/null; then die "a cluster is already running in $dir (ha-cluster.sh down first)"; fi
  local server; server="$(server_binary)"
  local port
  for port in "$etcd_client" "$etcd_peer" "$haproxy_primary" "$haproxy_replicas" "$haproxy_stats" "$haproxy_sync" \
    $(for n in "${nodes[@]}"; do pg_port "$n"; rest_port "$n"; done) "$(server_port 1)" "$(server_port 2)"; do
    port_free "$port" || die "port $port is taken (set COFFER_HA_PORT_OFFSET)"
  done
  install_patroni

  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  mkdir -p "$dir"/{logs,pids,secrets,bin,archive/coffer,server}
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$dir" "$dir"/{logs,pids,secrets,bin,archive,archive/coffer}
    as_daemon test -w "$dir" || die "user postgres cannot write $dir (a parent directory is closed to it); use a directory under /tmp"
  fi
  chmod 700 "$dir" "$dir/secrets" "$dir/server"
  local role
  for role in postgres replicator rewinder coffer_owner coffer_app coffer_maintenance; do
    [ -f "$dir/secrets/$role.password" ] || (umask 077; od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$dir/secrets/$role.password")
  done
  [ "$(id -u)" != 0 ] || chown -R postgres:postgres "$dir/secrets"
  install -m 0755 "$root/contrib/ha/post-bootstrap.sh" "$dir/bin/post-bootstrap.sh"
  install -m 0644 "$root/contrib/postgres/coffer-roles.sql" "$dir/bin/coffer-roles.sql"

  start_daemon etcd -- etcd --name e1 --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "e1=http://127.0.0.1:$etcd_peer"
  wait_until 30 "etcd answering" env ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$etcd_client" endpoint health

  local node primary_servers="" replica_servers=""
  for node in "${nodes[@]}"; do
    fill "$root/contrib/ha/patroni.yml.in" "$dir/$node.yml" \
      SCOPE=coffer NAME="$node" LISTEN_HOST=127.0.0.1 CONNECT_HOST=127.0.0.1 REST_PORT="$(rest_port "$node")" \
      PG_PORT="$(pg_port "$node")" ETCD_HOSTS="[127.0.0.1:$etcd_client]" TTL="$ttl" LOOP_WAIT=1 \
      RETRY_TIMEOUT=4 SYNCHRONOUS="$sync_mode" ARCHIVE_DIR="$dir/archive/coffer" \
      POST_BOOTSTRAP="$dir/bin/post-bootstrap.sh" DATA_DIR="$dir/$node" BIN_DIR="$pgbin" PGPASS="$dir/$node.pgpass" \
      CLIENT_NETWORK=127.0.0.1/32 SUPERUSER_PASSWORD="$(secret postgres)" \
      REPLICATION_PASSWORD="$(secret replicator)" REWIND_PASSWORD="$(secret rewinder)" SOCKET_DIR="$dir"
    chmod 600 "$dir/$node.yml"
    [ "$(id -u)" != 0 ] || chown postgres:postgres "$dir/$node.yml"
    primary_servers+="    server $node 127.0.0.1:$(pg_port "$node") check port $(rest_port "$node")"$'\n'
    replica_servers+="    server $node 127.0.0.1:$(pg_port "$node") check port $(rest_port "$node")"$'\n'
  done
  fill "$root/contrib/ha/haproxy.cfg.in" "$dir/haproxy.cfg" \
    PID_FILE="$dir/pids/haproxy.pid" BIND_HOST=127.0.0.1 STATS_PORT="$haproxy_stats" PRIMARY_PORT="$haproxy_primary" \
    REPLICA_PORT="$haproxy_replicas" PRIMARY_SERVERS="$primary_servers" REPLICA_SERVERS="$replica_servers" \
    SYNC_PORT="$haproxy_sync" SYNC_SERVERS="$(for n in 1 2; do echo "    server coffer$n 127.0.0.1:$(server_port "$n") check"; done)"

  # The first node bootstraps the cluster; the others start once it leads, so none of them races it to initdb.
  start_node pg1
  wait_until 60 "pg1 leading" sh -c "curl -fsS --max-time 1 http://127.0.0.1:$(rest_port pg1)/primary"
  start_node pg2
  start_node pg3
  start_daemon haproxy -- haproxy -db -f "$dir/haproxy.cfg"
  wait_until 120 "two streaming standbys" cluster_ready "$sync_mode"
  wait_until 30 "a writable primary through HAProxy" writable

  start_server 1
  start_server 2
  echo "ha-cluster.sh: up in $dir; $(cluster_summary)" >&2
}

start_node() {
  local node="$1"
  live_pid "$dir/pids/patroni-$node.pid" >/dev/null && die "$node's Patroni is already running"
  start_daemon "patroni-$node" PATH="$pgbin:/usr/bin:/bin" COFFER_ROLE_SECRETS="$dir/secrets" -- "$venv/bin/patroni" "$dir/$node.yml"
}

start_server() {
  local n="$1" server
  server="$(server_binary)"
  live_pid "$dir/pids/server-$n.pid" >/dev/null && die "coffer-server $n is already running"
  # The servers run as the invoking user (root may run them); they share the data directory, so a token one signs is
  # good at the other. The first start makes the signing key; the second waits for it.
  # COFFER_HA_DATABASE_PORT points a server at another PostgreSQL than the cluster's primary (the restore drill's).
  local database_port="${COFFER_HA_DATABASE_PORT:-$haproxy_primary}"
  COFFER_SERVER_DATABASE_URL="postgres://coffer_app:$(secret coffer_app)@127.0.0.1:$database_port/coffer" \
    COFFER_SERVER_ADMIN_DATABASE_URL="postgres://coffer_owner:$(secret coffer_owner)@127.0.0.1:$database_port/coffer" \
    COFFER_SERVER_DATA="$dir/server" COFFER_LOG="${COFFER_LOG:-info}" \
    setsid "$server" serve --host 127.0.0.1 --port "$(server_port "$n")" --trusted-proxy 127.0.0.1 \
    ${COFFER_HA_SERVER_ARGS:-} >>"$dir/logs/server-$n.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/server-$n.pid"
  wait_until 60 "coffer-server $n answering /health" server_healthy "$n"
}

stop_pid() {
  # stop_pid FILE SIGNAL SECONDS: signals the process and waits for it to go; SIGKILL after SECONDS.
  local file="$1" signal="$2" seconds="$3" pid
  pid="$(live_pid "$file")" || { rm -f "$file"; return 0; }
  kill -s "$signal" "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + seconds))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.2; break; fi
    sleep 0.1
  done
  rm -f "$file"
}

stop_server() { stop_pid "$dir/pids/server-$1.pid" TERM 10; }

down() {
  [ -d "$dir" ] || return 0
  local signal=TERM node
  [ "${FAST:-0}" = 1 ] && signal=KILL
  stop_server 1
  stop_server 2
  stop_pid "$dir/pids/haproxy.pid" "$signal" 5
  for node in "${nodes[@]}"; do stop_pid "$dir/pids/patroni-$node.pid" "$signal" 60 & done
  wait
  # A postmaster whose Patroni was killed keeps running; its pid is in the data directory.
  for node in "${nodes[@]}"; do
    if [ -f "$dir/$node/postmaster.pid" ]; then
      cp "$dir/$node/postmaster.pid" "$dir/pids/postgres-$node.pid" 2>/dev/null && stop_pid "$dir/pids/postgres-$node.pid" QUIT 10
    fi
  done
  stop_pid "$dir/pids/etcd.pid" "$signal" 10
  if [ "${WIPE:-0}" = 1 ]; then rm -rf "$dir"; fi
}

cluster_summary() {
  cluster_json | /usr/bin/python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
print(", ".join("%s %s %s tl %s lag %s" % (m["name"], m["role"], m["state"], m.get("timeline", "-"), m.get("lag", 0)) for m in members))'
}

status() {
  if ! cluster_json >/dev/null; then echo "no Patroni node answers in $dir"; return 1; fi
  cluster_json | /usr/bin/python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    print("%-4s %-12s %-10s timeline %-3s lag %s" % (m["name"], m["role"], m["state"], m.get("timeline", "-"), m.get("lag", 0)))'
  if writable; then echo "HAProxy :$haproxy_primary reaches a writable primary"; else echo "HAProxy :$haproxy_primary: no writable primary"; fi
  if curl -fsS --max-time 2 "http://127.0.0.1:$haproxy_sync/health" >/dev/null 2>&1; then
    echo "HAProxy :$haproxy_sync reaches a ready coffer-server"
  else
    echo "HAProxy :$haproxy_sync: no coffer-server ready"
  fi
  local n
  for n in 1 2; do
    if server_healthy "$n"; then echo "coffer-server $n :$(server_port "$n") healthy"; else echo "coffer-server $n :$(server_port "$n") not answering"; fi
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env)
    echo "COFFER_HA_SYNC_URL=http://127.0.0.1:$haproxy_sync"
    echo "COFFER_HA_SERVER_URLS=http://127.0.0.1:$(server_port 1),http://127.0.0.1:$(server_port 2)"
    echo "COFFER_HA_PRIMARY_PORT=$haproxy_primary"
    echo "COFFER_HA_DIR=$dir"
    ;;
  leader)
    cluster_json | /usr/bin/python3 -c '
import json, sys
leaders = [m["name"] for m in json.load(sys.stdin)["members"] if m["role"] == "leader"]
if not leaders:
    sys.exit(1)
print(leaders[0])'
    ;;
  pid)
    case "${2:-}:${3:-}" in
      postgres:pg[123]) head -n 1 "$dir/$3/postmaster.pid" ;;
      patroni:pg[123]) live_pid "$dir/pids/patroni-$3.pid" ;;
      server:[12]) live_pid "$dir/pids/server-$3.pid" ;;
      *) echo "usage: $0 pid postgres|patroni pg1|pg2|pg3, or pid server 1|2" >&2; exit 2 ;;
    esac
    ;;
  start-node) case "${2:-}" in pg[123]) start_node "$2" ;; *) echo "usage: $0 start-node pg1|pg2|pg3" >&2; exit 2 ;; esac ;;
  start-server) case "${2:-}" in [12]) start_server "$2" ;; *) echo "usage: $0 start-server 1|2" >&2; exit 2 ;; esac ;;
  stop-server) case "${2:-}" in [12]) stop_server "$2" ;; *) echo "usage: $0 stop-server 1|2" >&2; exit 2 ;; esac ;;
  *) echo "usage: $0 up|down|status|env|leader|pid|start-node|start-server|stop-server" >&2; exit 2 ;;
esac
