#!/usr/bin/env bash
# Fuzzes the barcode encoders and renderers (FuzzBarcode) and every importer (FuzzImport) with libFuzzer and
# AddressSanitizer, SECONDS each (default 60). Any crash, trap or sanitizer report fails the run; the crashing input
# is left in .build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
export SWIFT_BACKTRACE=enable=no
mkdir -p .build-fuzz/findings
for target in FuzzBarcode FuzzImport; do
  mkdir -p ".build-fuzz/corpus-$target"
  # -Xswiftc -sanitize=fuzzer,address instruments the library too, not only the entry point (coverage needs both).
  swift build --product "$target" --sanitize=fuzzer --sanitize=address \
    -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz >.build-fuzz/build.log 2>&1 \
    || { cat .build-fuzz/build.log; exit 1; }
  ".build-fuzz/debug/$target" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix=.build-fuzz/findings/ ".build-fuzz/corpus-$target" 2>&1 | tail -3
  echo "fuzz: ${seconds}s of $target found no crash"
done
