#!/usr/bin/env bash
# Fuzzes the barcode encoders and renderers with libFuzzer and AddressSanitizer for SECONDS (default 60).
# Any crash, trap or sanitizer report fails the run; the crashing input is left in .build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
export SWIFT_BACKTRACE=enable=no
mkdir -p .build-fuzz/corpus .build-fuzz/findings
# -Xswiftc -sanitize=fuzzer,address instruments the library too, not only the entry point (coverage needs both).
swift build --product FuzzBarcode --sanitize=fuzzer --sanitize=address \
  -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz >.build-fuzz/build.log 2>&1 \
  || { cat .build-fuzz/build.log; exit 1; }
.build-fuzz/debug/FuzzBarcode -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix=.build-fuzz/findings/ .build-fuzz/corpus 2>&1 | tail -4
echo "fuzz: ${seconds}s of FuzzBarcode found no crash"
