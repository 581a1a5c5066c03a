#!/usr/bin/env bash
# Runs Coffer's whole test suite. The tests check Coffer against outside oracles (OpenSSL through Python's
# `cryptography`, `oathtool`, `zxing-cpp`, `zbarimg`, `qrencode`, `zint`, KeePassXC, pykeepass, libsodium), so this
# first makes sure they are installed.
set -euo pipefail
cd "$(dirname "$0")/.."

missing_apt=()
command -v oathtool >/dev/null || missing_apt+=(oathtool)
command -v zbarimg >/dev/null || missing_apt+=(zbar-tools)
command -v qrencode >/dev/null || missing_apt+=(qrencode)
command -v zint >/dev/null || missing_apt+=(zint)
command -v rsvg-convert >/dev/null || missing_apt+=(librsvg2-bin)
[ -e /usr/include/sqlite3.h ] || missing_apt+=(libsqlite3-dev)
[ -e /usr/include/zlib.h ] || missing_apt+=(zlib1g-dev)
[ -e /usr/include/argon2.h ] || missing_apt+=(libargon2-dev)
# The barcode reader's JPEG decoder.
[ -e /usr/include/jpeglib.h ] || missing_apt+=(libjpeg62-turbo-dev)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing_apt+=(postgresql)
# On cue: a real gpsd replaying a track (gpsfake), and a private session bus for desktop notifications.
command -v gpsfake >/dev/null || missing_apt+=(gpsd gpsd-clients)
command -v dbus-daemon >/dev/null || missing_apt+=(dbus-daemon)
# Key stores: a real Secret Service (gnome-keyring-daemon on a private bus from dbus-run-session, started by the tests
# through scripts/keyring-session.sh), libsecret (loaded at run time), and secret-tool as the independent client.
command -v gnome-keyring-daemon >/dev/null || missing_apt+=(gnome-keyring)
command -v secret-tool >/dev/null || missing_apt+=(libsecret-tools)
command -v gdbus >/dev/null || missing_apt+=(libglib2.0-bin)
ls /usr/lib/*/libsecret-1.so.0 >/dev/null 2>&1 || missing_apt+=(libsecret-1-0)
# The agent's tests act as a second user (setpriv, util-linux) with a socket client in Debian's /usr/bin/python3,
# which that user can run.
command -v setpriv >/dev/null || missing_apt+=(util-linux)
[ -x /usr/bin/python3 ] || missing_apt+=(python3)
# The web vault's barcode encoder runs in Node for the tests that compare it with the native one.
command -v node >/dev/null || missing_apt+=(nodejs)
command -v tsc >/dev/null || missing_apt+=(node-typescript)
# KeePass databases are written at test time by KeePassXC and pykeepass (Debian's, for /usr/bin/python3, with
# PyCryptodome as the stream-cipher oracle); Ente's encrypted export is checked against libsodium itself.
command -v keepassxc-cli >/dev/null || missing_apt+=(keepassxc)
/usr/bin/python3 -c 'import pykeepass, Cryptodome' 2>/dev/null || missing_apt+=(python3-pykeepass)
ls /usr/lib/*/libsodium.so.23 >/dev/null 2>&1 || missing_apt+=(libsodium23)
# The TPM key store: tpm2-tss's headers for the build, swtpm as the TPM and tpm2-tools as the independent client.
[ -e /usr/include/tss2/tss2_esys.h ] || missing_apt+=(libtss2-dev)
command -v swtpm >/dev/null || missing_apt+=(swtpm swtpm-tools)
command -v tpm2_unseal >/dev/null || missing_apt+=(tpm2-tools)
# The headers of the libraries loaded at run time, which LoadedSignatureTests parses (with the toolchain's clang)
# to check the function types Coffer loads them with.
[ -e /usr/include/libsecret-1/libsecret/secret.h ] || missing_apt+=(libsecret-1-dev)
[ -e /usr/include/dbus-1.0/dbus/dbus.h ] || missing_apt+=(libdbus-1-dev)
[ -e /usr/include/libxml2/libxml/xmlreader.h ] || missing_apt+=(libxml2-dev)
command -v pkg-config >/dev/null || missing_apt+=(pkg-config)
if [ ${#missing_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null
  else
    echo "test.sh: please install: ${missing_apt[*]} (sudo apt-get install ...)" >&2
    exit 1
  fi
fi

python3 - <<'PY' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check -r Tests/oracles/requirements.txt
import cryptography, zxingcpp, numpy, PIL, geographiclib, pygeohash, haversine, jeepney
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
PY

# The server's tests run against both stores: a throwaway PostgreSQL cluster is started here (as root, through
# scripts/postgres.sh) unless COFFER_TEST_POSTGRES_URL already names one.
if [ -z "${COFFER_TEST_POSTGRES_URL:-}" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test.sh: the server tests need PostgreSQL: run as root, or export COFFER_TEST_POSTGRES_URL, COFFER_TEST_POSTGRES_ADMIN_URL and COFFER_TEST_POSTGRES_MAINTENANCE_URL" >&2
    exit 1
  fi
  pg_dir=$(mktemp -d /tmp/coffer-pg.XXXXXX)
  trap 'scripts/postgres.sh stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
  export COFFER_PG_PORT=${COFFER_PG_PORT:-54329}
  # Captured first: inside `export $(…)` a failing start would be ignored. PostgreSQL's own message is already on
  # stderr (postgres.sh prints initdb's or the server's log when they fail).
  if ! pg_env=$(scripts/postgres.sh start "$pg_dir"); then
    echo "test.sh: PostgreSQL did not start (scripts/postgres.sh start $pg_dir); its message is above" >&2
    exit 1
  fi
  while IFS= read -r assignment; do
    export "$assignment"
  done <<<"$pg_env"
fi

# The code is formatted as .swift-format says (the toolchain's swift-format; a few seconds): `swift format format
# --in-place --recursive --parallel Sources Tests` mends what this finds.
if swift format --version >/dev/null 2>&1; then
  swift format lint --strict --recursive --parallel Sources Tests
else
  echo "test.sh: this toolchain has no swift-format; the format check is left out" >&2
fi
# The install test (scripts/install.sh) writes man pages with swift-argument-parser's generator, built beside coffer.
swift build --product generate-manual
# The web vault's barcode encoder: CofferBarcode compiled to WebAssembly with the toolchain's Embedded Swift, which
# the Swift tests compare with the native encoder and the app serves.
scripts/build-wasm.sh
swift test "$@"
# The whole suite (no filter given) goes on with the web vault: its JavaScript reader under node, then the app in
# headless Chromium against a real coffer-server.
if [ $# -eq 0 ]; then
  scripts/web-test.sh
fi
