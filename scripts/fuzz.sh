#!/usr/bin/env bash
# Fuzzes the barcode encoders and renderers (FuzzBarcode), every importer (FuzzImport), the item-content decoder
# (FuzzItemContent), the sync wire's JSON bodies, requests and answers (FuzzWire) and the agent's socket protocol
# (FuzzAgentWire), the image decoders with the barcode reader (FuzzScan) and the Stellar transaction reader
# (FuzzStellarXDR) with libFuzzer and AddressSanitizer,
# SECONDS each (default 60).
#
# Each run starts from the committed minimised corpus (Tests/FuzzCorpus/<target>) and from seeds made from the
# committed fixtures (scripts/fuzz-seeds.py); what it finds stays in .build-fuzz/corpus-<target> for the next run.
# Fuzzing builds (-DFUZZING) hold every key-derivation cost at its floor (Sources/CofferInterop/FuzzingFloor.swift)
# and the seeds include the encrypted fixtures written again at that floor, under the passwords FuzzImport tries,
# so that inputs get past the password to the parsers behind it.
# Any crash, trap, leak or sanitizer report fails the run and prints the report and the crashing input (base64) in
# the log; the file is also left in .build-fuzz/findings/.
#
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh minimise    # rewrites Tests/FuzzCorpus/<target>: the smallest set of inputs covering what it, the
#                               # seeds and the last runs' corpus cover, less the seeds themselves
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-60}"
export SWIFT_BACKTRACE=enable=no
mkdir -p .build-fuzz/findings
for target in FuzzBarcode FuzzImport FuzzItemContent FuzzWire FuzzAgentWire FuzzScan FuzzStellarXDR; do
  committed="Tests/FuzzCorpus/$target"
  corpus=".build-fuzz/corpus-$target"
  seeds=".build-fuzz/seeds-$target"
  rm -rf "$seeds"
  mkdir -p "$committed" "$corpus"
  python3 scripts/fuzz-seeds.py "$target" "$seeds" >/dev/null
  # -Xswiftc -sanitize=fuzzer,address instruments the library too, not only the entry point (coverage needs both).
  swift build --product "$target" --sanitize=fuzzer --sanitize=address \
    -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz >.build-fuzz/build.log 2>&1 \
    || { cat .build-fuzz/build.log; exit 1; }
  if [ "$mode" = minimise ]; then
    merged=".build-fuzz/merged-$target"
    rm -rf "$merged" && mkdir -p "$merged"
    ".build-fuzz/debug/$target" -merge=1 "$merged" "$committed" "$seeds" "$corpus" >/dev/null 2>&1
    # Inputs equal to a seed are left out (libFuzzer names files by their SHA-1, as fuzz-seeds.py does): the
    # fixtures make them again on every run.
    for seed in "$seeds"/*; do rm -f "$merged/$(basename "$seed")"; done
    rm -rf "$committed" && mv "$merged" "$committed"
    echo "fuzz: $target corpus minimised to $(ls "$committed" | wc -l) files"
    continue
  fi
  log=".build-fuzz/$target.log"
  rm -f .build-fuzz/findings/"$target"-*
  # The first directory receives new inputs; the committed corpus and the seeds are only read.
  if ! ".build-fuzz/debug/$target" -max_total_time="$mode" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix=".build-fuzz/findings/$target-" "$corpus" "$committed" "$seeds" >"$log" 2>&1; then
    tail -n 80 "$log"
    for finding in .build-fuzz/findings/"$target"-*; do
      [ -e "$finding" ] || continue
      echo "fuzz: $target finding $(basename "$finding"), base64 (decode with: base64 -d > input):"
      base64 -w 0 "$finding"
      echo
    done
    echo "fuzz: $target failed" >&2
    exit 1
  fi
  tail -n 3 "$log"
  echo "fuzz: ${mode}s of $target found no crash"
done
