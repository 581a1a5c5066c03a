#!/usr/bin/env bash
# The web vault's own tests, after the Swift build: the JavaScript reader under `node --test` (golden vault, manifest
# vectors, OpenSSL, oathtool, the places oracle, a vault written by the CLI) and the app in headless Chromium against
# a real coffer-server (Web/tests/browser_test.py). Builds the WebAssembly encoder first when it is missing.
# Usage: scripts/web-test.sh [--screenshots DIR] [--bench N]   (arguments go to the browser test)
set -euo pipefail
cd "$(dirname "$0")/.."
# The scripts the app ships, type-checked as they are served (`// @ts-check`, JSDoc types; no build step): the page's
# in Web/tsconfig.json, the two workers' in Web/tsconfig.worker.json.
if ! command -v tsc >/dev/null; then
  echo "web-test.sh: tsc is missing: sudo apt-get install node-typescript (Debian's TypeScript, 4.8 on Debian 12)" >&2
  exit 1
fi
tsc -p Web/tsconfig.json && tsc -p Web/tsconfig.worker.json \
  || { echo "web-test.sh: the web vault's scripts do not type-check (tsc's errors above)" >&2; exit 1; }
missing_apt=()
command -v node >/dev/null || missing_apt+=(nodejs)
command -v chromium >/dev/null || missing_apt+=(chromium)
command -v chromedriver >/dev/null || missing_apt+=(chromium-driver)
command -v oathtool >/dev/null || missing_apt+=(oathtool)
if [ ${#missing_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null
  else
    echo "web-test.sh: please install: ${missing_apt[*]} (sudo apt-get install ...)" >&2
    exit 1
  fi
fi
# WebCrypto as `globalThis.crypto` (what the page uses) needs Node 20 or later; Debian 12's own nodejs is 18.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "web-test.sh: Node 20 or later is needed (node --version: $(node --version))" >&2
  exit 1
fi
python3 -c 'import selenium, zxingcpp' 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check -r Web/tests/requirements.txt \
  || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages -r Web/tests/requirements.txt
[ -f Web/app/coffer-barcode.wasm ] && [ -f Web/app/coffer-scan.wasm ] || scripts/build-wasm.sh
node --test Web/tests/
python3 Web/tests/browser_test.py "$@"
