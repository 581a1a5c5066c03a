#!/usr/bin/env bash
# Patroni's post_bootstrap hook: runs once, on the node that initialised the cluster, with a superuser connection
# string as $1 (the password comes from Patroni's PGPASSFILE). Creates Coffer's roles and database
# (contrib/postgres/coffer-roles.sql, installed beside this script) and sets each role's password from
# "$COFFER_ROLE_SECRETS/<role>.password" when that file exists. Passwords go to psql on standard input, never on a
# command line, and statement logging is off for the session that sets them.
set -euo pipefail
connection="$1"
here="$(cd "$(dirname "$0")" && pwd)"
secrets="${COFFER_ROLE_SECRETS:-/etc/patroni/coffer-roles}"

roles_sql="$here/coffer-roles.sql"
[ -f "$roles_sql" ] || roles_sql="$here/../postgres/coffer-roles.sql"
psql -X -q -d "$connection" <"$roles_sql" >/dev/null

{
  echo '\set ON_ERROR_STOP on'
  echo "SET log_statement = 'none';"
  echo "SET log_min_error_statement = 'panic';"
  for role in coffer_owner coffer_app coffer_maintenance; do
    file="$secrets/$role.password"
    [ -f "$file" ] || continue
    case "$file" in *"'"*) echo "post-bootstrap: $file: a quote in the path is not supported" >&2; exit 1 ;; esac
    echo "\\set password \`cat '$file'\`"
    echo "ALTER ROLE $role PASSWORD :'password';"
  done
  echo '\unset password'
} | psql -X -q -d "$connection" >/dev/null
