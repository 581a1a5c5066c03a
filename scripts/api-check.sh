#!/usr/bin/env bash
# Checks coffer-server against its contract, docs/openapi.yaml:
#   1. validates the spec (openapi-spec-validator);
#   2. makes a temporary data directory with an operator token and the places fixtures of
#      Tests/CofferPlacesTests/Fixtures imported (networks, Costco's CSV, a GeoJSON), so that the places endpoints
#      answer with real networks, locations and tiles;
#   3. starts the server ($COFFER_SERVER_BIN, default .build/debug/coffer-server) on a free loopback port on that
#      directory, with a high request budget and Sign in with Apple configured with a throw-away key;
#   4. registers an account and logs in to get a bearer token;
#   5. runs schemathesis with every check for about DURATION seconds (default 120), the account's access token for
#      the `bearerAuth` operations and the operator token for the `operatorAuth` (admin) ones, then short runs of the
#      two operations that end the session (logout, account deletion), each with a token of its own.
# Exits non-zero if the spec is invalid, the server does not start, or schemathesis reports any failure.
#
# Usage: scripts/api-check.sh [DURATION_SECONDS]
# Env:   COFFER_SERVER_BIN   server binary (default .build/debug/coffer-server)
#        API_CHECK_REPORT    directory to keep schemathesis' JUnit/NDJSON reports and the server log (optional)
#        API_CHECK_SEED      schemathesis seed, to replay a run (optional)
#        API_CHECK_NO_PIP=1  skip `pip install` (the packages are already there)
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-120}"
if ! [[ "$duration" =~ ^[0-9]+$ ]] || [ "$duration" -lt 20 ]; then
  echo "api-check: DURATION must be a whole number of seconds, at least 20" >&2
  exit 2
fi
spec="docs/openapi.yaml"
server_bin="${COFFER_SERVER_BIN:-.build/debug/coffer-server}"

if [ "${API_CHECK_NO_PIP:-0}" != 1 ]; then
  python3 -m pip install --quiet --disable-pip-version-check -r Tests/oracles/api-requirements.txt
fi
for tool in openapi-spec-validator schemathesis openssl curl; do
  command -v "$tool" >/dev/null || { echo "api-check: $tool is missing (pip install -r Tests/oracles/api-requirements.txt; apt-get install openssl curl)" >&2; exit 1; }
done
[ -x "$server_bin" ] || { echo "api-check: no server binary at $server_bin (swift build --product coffer-server, or set COFFER_SERVER_BIN)" >&2; exit 1; }

echo "== validating $spec"
openapi-spec-validator "$spec"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  local status=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ -n "${API_CHECK_REPORT:-}" ]; then
    mkdir -p "$API_CHECK_REPORT"
    cp -r "$work/report/." "$API_CHECK_REPORT/" 2>/dev/null || true
    cp "$work/server.log" "$API_CHECK_REPORT/server.log" 2>/dev/null || true
    cp "$work/places-import.log" "$API_CHECK_REPORT/places-import.log" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM

# A throw-away RSA key published as Apple's JWKS, so that /v1/auth/apple runs its real verification path (401 for
# tokens it cannot verify) instead of answering 501.
openssl genrsa -out "$work/apple.pem" 2048 2>/dev/null
modulus_hex="$(openssl rsa -in "$work/apple.pem" -noout -modulus | sed 's/^Modulus=//')"
python3 - "$modulus_hex" >"$work/apple-jwks.json" <<'PY'
import base64, json, sys
n = bytes.fromhex(sys.argv[1])
b64url = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
print(json.dumps({"keys": [{"kty": "RSA", "kid": "api-check", "use": "sig", "alg": "RS256",
                            "n": b64url(n), "e": b64url((65537).to_bytes(3, "big"))}]}))
PY

# The operator token must exist before the server starts (it loads the token's hash at start), and the places are
# imported straight into the store, the way an operator seeds a server, so that nothing depends on the admin
# endpoints working.
fixtures="Tests/CofferPlacesTests/Fixtures"
operator_token="$("$server_bin" operator-token --data "$work/data")" || { echo "api-check: operator-token failed" >&2; exit 1; }
[[ "$operator_token" == coffer-op-* ]] || { echo "api-check: operator-token printed no token" >&2; exit 1; }
import_places() {
  "$server_bin" places import --data "$work/data" "$@" >>"$work/places-import.log" 2>&1 || {
    echo "api-check: places import $* failed:" >&2
    tail -20 "$work/places-import.log" >&2
    exit 1
  }
}
echo "== importing the places fixtures"
import_places "$fixtures/networks_wikidata.csv"
import_places --network costco "$fixtures/costco.csv"
import_places "$fixtures/stores.geojson"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
base="http://127.0.0.1:$port"
echo "== starting $server_bin on $base"
"$server_bin" --data "$work/data" --host 127.0.0.1 --port "$port" --requests-per-minute 1000000 \
  --apple-jwks "$work/apple-jwks.json" --apple-audience app.coffer.api-check >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "$base/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "api-check: the server exited at start:" >&2; tail -20 "$work/server.log" >&2; exit 1; }
  sleep 0.2
done
curl -fsS "$base/health" >/dev/null || { echo "api-check: the server did not answer /health" >&2; exit 1; }

# Registers a fresh account (random email, auth key, vault id and a well-formed slot), then logs in with it and
# prints the access token. Values are random: nothing here is a secret worth keeping.
new_token() {
  python3 - "$base" <<'PY'
import base64, json, os, sys, urllib.request, uuid
base = sys.argv[1]
b64 = lambda n: base64.b64encode(os.urandom(n)).decode()
def post(path, body):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.load(response)
email, auth_key = f"api-check-{uuid.uuid4().hex}@example.com", b64(32)
status, _ = post("/v1/auth/register", {
    "email": email, "auth_key": auth_key, "vault_id": str(uuid.uuid4()),
    "slot": {"id": str(uuid.uuid4()), "kdf": {"algorithm": "pbkdf2-sha256", "iterations": 600000},
             "salt": b64(32), "wrapped_key": b64(60)}})
assert status == 201, f"register answered {status}"
status, body = post("/v1/auth/login", {"email": email, "auth_key": auth_key})
assert status == 200 and body.get("token_type") == "Bearer", f"login answered {status}"
print(body["access_token"])
PY
}
# Every session is opened now: once fuzzing has made enough failed logins from this address, logins answer 429.
token="$(new_token)"
logout_token="$(new_token)"
delete_token="$(new_token)"

# Schemathesis settings the spec cannot carry:
# - 413 is a correct rejection of an oversized value (the spec states the limits), so negative data may get it;
# - a map_case hook keeps generated *valid* requests inside the rules JSON Schema cannot state: in a push, no item id
#   twice and each revision above its base revision, and no manifest (only a vault's key can make one), except in a
#   rotation's commit, which needs one (a structurally valid manifest of the epoch after its base); a card's valid_to
#   not before valid_from; limits counted in
#   UTF-8 bytes (the spec's maxLength is the same number in characters); a places import whose body is a real places
#   file (a random string is not one, and no schema can say what is). The rules are in the spec's prose; negative
#   cases are left alone.
cat >"$work/schemathesis.toml" <<'TOML'
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5xx"]
TOML
cat >"$work/api_check_hooks.py" <<'PY'
import base64
import json
import math
import os
import uuid
from datetime import datetime, timezone

import schemathesis

try:
    # CPython 3.11.7 can raise "SystemError: AST constructor recursion depth mismatch" (gh-106905) when Hypothesis
    # parses a lambda's source deep in the stack to name it in a repr. The name is cosmetic; fall back to a plain one.
    from hypothesis.internal import lambda_sources as _lambda_sources

    _describe = _lambda_sources._lambda_description

    def _safe_describe(f, *args, **kwargs):
        try:
            return _describe(f, *args, **kwargs)
        except SystemError:
            return "lambda: <unknown>"

    _lambda_sources._lambda_description = _safe_describe
except (ImportError, AttributeError):
    pass

# Limits the server counts in UTF-8 bytes; the spec's maxLength holds the same number in characters.
BYTE_LIMITS = {"email": 254, "payload_encrypted": 65536, "label": 64, "metadata_key": 128, "metadata_value": 1024,
               "place_text": 200, "search": 200, "network_id": 64}

FIXTURES = os.environ["API_CHECK_FIXTURES"]

# A GeoJSON text sequence is text; schemathesis has no serializer of its own for it.
schemathesis.serializer.alias("application/geo+json-seq", "text/plain")


def _fit(text, limit):
    """An over-long (in bytes) but otherwise valid string with its non-ASCII characters replaced by `x`."""
    if not isinstance(text, str) or len(text) > limit or len(text.strip().lower().encode("utf-8", "surrogatepass")) <= limit:
        return text
    return "".join(c if ord(c) < 0x80 else "x" for c in text)


def _fit_bytes(text, limit):
    """Like `_fit`, for a limit on the text as sent (no trimming or case folding first)."""
    if not isinstance(text, str) or len(text) > limit or len(text.encode("utf-8", "surrogatepass")) <= limit:
        return text
    return "".join(c if ord(c) < 0x80 else "x" for c in text)


def _fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as file:
        return file.read()


# Card dates as numbers count seconds from here (CardOnCue's iOS encoder, Foundation's reference date).
REFERENCE_DATE = datetime(2001, 1, 1, tzinfo=timezone.utc)


def _date(value):
    """A card date in whole seconds since 2001, from either form the server reads (it drops fractional seconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return math.floor(value)
    if not isinstance(value, str):
        return None
    try:
        return math.floor((datetime.fromisoformat(value.replace("Z", "+00:00")) - REFERENCE_DATE).total_seconds())
    except (ValueError, TypeError):
        return None


def _is_uuid(value):
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def _integer(value):
    """A JSON integer (JSON Schema counts 5.0 as one), else None."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _manifest_free(body):
    """A manifest is opaque to JSON Schema (188 bytes whose tag only the vault's key can make, for the epoch after
    the server's head): valid generated requests go without one, as an account that keeps no verified state takes."""
    for field in ("manifest", "chain", "base_epoch"):
        body.pop(field, None)


def _push(body):
    _manifest_free(body)
    if isinstance(body.get("items"), list) and not body["items"]:
        # Without a manifest, a push needs an item.
        body["items"] = [{"item": {"id": str(uuid.uuid4()), "kind": "note", "revision": 1, "updated_at": 0,
                                   "deleted": False, "box": "A" * 40}, "base_revision": 0}]
    seen = set()
    for index, write in enumerate(body.get("items") or []):
        if not isinstance(write, dict) or not isinstance(write.get("item"), dict):
            continue
        item = write["item"]
        if _is_uuid(item.get("id")):
            if item["id"].lower() in seen:
                item["id"] = str(uuid.uuid5(uuid.NAMESPACE_OID, f"api-check/{index}/{item['id']}"))
            seen.add(item["id"].lower())
        revision, base = _integer(item.get("revision")), _integer(write.get("base_revision"))
        if revision is not None and base is not None and 1 <= revision <= base:
            write["base_revision"] = revision - 1


def _rotation_items(body):
    """Rotation rows are a push's rows; the card face's kinds are not the vault's to re-seal."""
    _push(body)
    for write in body.get("items") or []:
        if isinstance(write, dict) and isinstance(write.get("item"), dict):
            kind = write["item"].get("kind")
            if isinstance(kind, str) and kind.startswith("cardoncue."):
                write["item"]["kind"] = "note"


def _rotation_commit(body):
    """A rotation's manifest is required: a structurally valid one (docs/FORMAT.md §8.6) of the epoch after
    `base_epoch`, its tag random (only devices check tags)."""
    epoch = _integer(body.get("base_epoch"))
    if epoch is None or not 0 <= epoch < 2**63 - 1:
        return
    previous = bytes(32) if epoch == 0 else os.urandom(32)
    manifest = (b"CFM1" + os.urandom(16) + (epoch + 1).to_bytes(8, "big") + previous + os.urandom(32)
                + (1).to_bytes(4, "big") + os.urandom(16) + bytes(8) + (2).to_bytes(4, "big") + os.urandom(64))
    body["manifest"] = base64.b64encode(manifest).decode("ascii")


def _card(body, patch):
    if isinstance(body.get("payload_encrypted"), str):
        body["payload_encrypted"] = _fit(body["payload_encrypted"], BYTE_LIMITS["payload_encrypted"])
    for field in ("tags", "network_ids"):
        if isinstance(body.get(field), list):
            body[field] = [_fit(entry, BYTE_LIMITS["label"]) for entry in body[field]]
    if isinstance(body.get("metadata"), dict):
        body["metadata"] = {
            _fit(key, BYTE_LIMITS["metadata_key"]): _fit(value, BYTE_LIMITS["metadata_value"])
            for key, value in body["metadata"].items()
        }
    if patch:
        # A patch that moves one end of the validity window also clears the other, so the stored card cannot make
        # it cross.
        if "valid_to" in body and "valid_from" not in body:
            body["valid_from"] = None
        if "valid_from" in body and "valid_to" not in body:
            body["valid_to"] = None
    start, end = _date(body.get("valid_from")), _date(body.get("valid_to"))
    if start is not None and end is not None and end < start:
        body["valid_from"], body["valid_to"] = body["valid_to"], body["valid_from"]


def _network(body):
    if isinstance(body.get("name"), str):
        body["name"] = _fit_bytes(body["name"], BYTE_LIMITS["place_text"])
    for field in ("canonical_names", "tags"):
        if isinstance(body.get(field), list):
            body[field] = [_fit_bytes(entry, BYTE_LIMITS["place_text"]) for entry in body[field]]


def _import(case):
    """A places import carries a real file: Costco's locations CSV (for its network) or a GeoJSON/Overpass file,
    chosen by the body's media type. `overwrite` is left as generated. Files go in as text: schemathesis takes a body
    holding bytes for one that breaks the schema, and the case for a negative one."""
    media_type = (case.media_type or "").split(";")[0].strip().lower()
    query = dict(case.query or {})
    costco_csv = _fixture("costco.csv").decode("utf-8")
    if media_type == "multipart/form-data":
        body = dict(case.body) if isinstance(case.body, dict) else {}
        body["file"], body["network_id"] = costco_csv, "costco"
        case.body = body
        return
    if media_type in ("text/csv", "application/octet-stream"):
        query["network_id"] = "costco"
        case.body = costco_csv
    else:
        query.pop("network_id", None)
        if media_type == "application/geo+json":
            case.body = json.loads(_fixture("stores.geojson"))
        elif media_type == "application/geo+json-seq":
            case.body = _fixture("stores.geojsonseq").decode("utf-8")
        else:
            case.body = json.loads(_fixture("overpass.json"))
    case.query = query


@schemathesis.hook
def map_case(context, case):
    """Keeps generated *valid* requests inside the rules JSON Schema cannot state. Negative cases are left alone,
    and so are cases with any negative part (the coverage phase makes positive cases with one invalid parameter)."""
    meta = case.meta
    if meta is not None and (
        not meta.generation.mode.is_positive
        or any(component.mode.is_negative for component in meta.components.values())
    ):
        return case
    body, path = case.body, case.operation.path
    if path == "/v1/admin/import":
        _import(case)
        return case
    if path == "/v1/networks" and isinstance(case.query, dict) and "search" in case.query:
        case.query["search"] = _fit_bytes(case.query["search"], BYTE_LIMITS["search"])
    if not isinstance(body, dict):
        return case
    if path == "/v1/sync/push":
        _push(body)
    elif path == "/v1/account/passphrase":
        _manifest_free(body)
    elif path == "/v1/sync/rotations/{rotation}/items":
        _rotation_items(body)
    elif path == "/v1/sync/rotations/{rotation}/commit":
        _rotation_commit(body)
    elif path == "/v1/cards" and case.method.upper() == "POST":
        _card(body, patch=False)
    elif path == "/v1/cards/{id}" and case.method.upper() == "PATCH":
        _card(body, patch=True)
    elif path in ("/v1/auth/prelogin", "/v1/auth/register", "/v1/auth/login") and "email" in body:
        body["email"] = _fit(body["email"], BYTE_LIMITS["email"])
    elif path == "/v1/admin/networks":
        _network(body)
    elif path == "/v1/region-refresh" and isinstance(body.get("user_networks"), list):
        body["user_networks"] = [_fit_bytes(entry, BYTE_LIMITS["network_id"]) for entry in body["user_networks"]]
    return case
PY

seed_args=()
[ -n "${API_CHECK_SEED:-}" ] && seed_args=(--seed "$API_CHECK_SEED")

# use_after_free is left out on purpose: DELETE /v1/cards/{id} is CardOnCue's soft delete (it archives; the card stays
# readable by id), which that check takes for a resource that outlived its deletion.
# Credentials go by security scheme (schemathesis' [auth.openapi.*]): the run's access token for `bearerAuth`, the
# operator token for `operatorAuth`, so that each operation gets the one its contract names and the auth checks can
# take it away. A global Authorization header would override both.
run_schemathesis() {
  local name="$1" bearer="$2"
  shift 2
  local config="$work/schemathesis-$name.toml"
  {
    cat "$work/schemathesis.toml"
    printf '\n[auth.openapi.bearerAuth]\nbearer = "%s"\n' "$bearer"
    printf '\n[auth.openapi.operatorAuth]\nbearer = "%s"\n' "$operator_token"
  } >"$config"
  SCHEMATHESIS_HOOKS=api_check_hooks PYTHONPATH="$work" API_CHECK_FIXTURES="$PWD/$fixtures" \
    schemathesis --config-file "$config" \
    run "$spec" --url "$base" --checks all --exclude-checks use_after_free \
    --no-color --report junit,ndjson --report-dir "$work/report" \
    --report-junit-path "$work/report/$name.xml" --report-ndjson-path "$work/report/$name.ndjson" \
    "${seed_args[@]}" "$@"
}

status=0
main_time=$(( duration > 40 ? duration - 20 : 20 ))
echo "== schemathesis: every operation but logout and account deletion (~${main_time}s)"
run_schemathesis main "$token" --workers 2 --max-time "$main_time" \
  --exclude-operation-id logout --exclude-operation-id deleteUser || status=1

# Each of these ends the session it is called with, so each gets a token of its own and a handful of examples.
for run in "logout $logout_token" "deleteUser $delete_token"; do
  operation="${run%% *}"
  echo "== schemathesis: $operation, with a session of its own"
  run_schemathesis "$operation" "${run#* }" --workers 1 --max-examples 10 --include-operation-id "$operation" || status=1
done

if [ "$status" -ne 0 ]; then
  echo "api-check: schemathesis reported failures (see above)" >&2
else
  echo "api-check: spec valid, schemathesis found no failures"
fi
exit "$status"
