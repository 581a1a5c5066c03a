#!/usr/bin/env bash
# Builds the web vault's two WebAssembly modules with the installed toolchain's Embedded Swift for wasm32, each linked
# with the tiny C shim Web/wasm/shim.c:
# - coffer-barcode.wasm, the barcode encoder: Sources/CofferBarcode (without its PNG writer, which needs zlib) and
#   Web/wasm/BarcodeExports.swift, built for size (the page loads it at start);
# - coffer-scan.wasm, the barcode reader: Sources/CofferScan on CofferBarcode's tables and Web/wasm/ScanExports.swift,
#   built for speed (a camera frame a tenth of a second; the scan worker loads it only when the camera opens).
# Nothing is downloaded and the output is never committed (both are ignored by git).
# Usage: scripts/build-wasm.sh [ENCODER_OUTPUT [READER_OUTPUT]]; the reader goes beside the encoder unless named.
# Prints nothing on success.
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-Web/app/coffer-barcode.wasm}
reader_output=${2:-$(dirname "$output")/coffer-scan.wasm}
toolchain=$(dirname "$(readlink -f "$(command -v swiftc)")")
work=$(mktemp -d /tmp/coffer-wasm.XXXXXX)
trap 'rm -rf "$work"' EXIT

sources=()
for file in Sources/CofferBarcode/*.swift; do
  [ "$(basename "$file")" = PNGWriter.swift ] || sources+=("$file")
done

"$toolchain/swiftc" -target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo -Osize \
  -parse-as-library -module-name CofferBarcode -package-name coffer -c -o "$work/barcode.o" "${sources[@]}" Web/wasm/BarcodeExports.swift
"$toolchain/clang" --target=wasm32-unknown-unknown -Os -mbulk-memory -ffreestanding -nostdlib -fno-builtin -c -o "$work/shim.o" \
  Web/wasm/shim.c
"$toolchain/wasm-ld" --no-entry --strip-all --gc-sections \
  --export=coffer_alloc --export=coffer_free --export=coffer_barcode --export=coffer_digits --export=coffer_answer \
  --export=coffer_answer_count --export=coffer_answer_width --export=coffer_answer_height \
  -o "$work/out.wasm" "$work/barcode.o" "$work/shim.o" \
  "$toolchain/../lib/swift/embedded/wasm32-unknown-none-wasm/libswiftUnicodeDataTables.a"
mkdir -p "$(dirname "$output")"
mv "$work/out.wasm" "$output"

# The reader: CofferBarcode as a module of its own (CofferScan imports it, and uses its `package` tables), then
# CofferScan with the exports. For speed, with the WebAssembly features every current browser has (SIMD, bulk memory,
# non-trapping float-to-int conversion, sign extension), and without Swift's run-time checks (-Ounchecked): WebAssembly
# has no overflow flag, so each checked sum and index is several more instructions, and a 1280x720 frame takes twice
# as long with them (33 ms against 16 in V8). The same code runs with every check in the CLI, and is fuzzed so
# (scripts/fuzz.sh, FuzzScan); here it runs in the scan worker, which holds nothing but pictures and what they read,
# inside WebAssembly's own bounds: a fault it did not catch stays in that memory or traps the worker.
features=(-Xllvm -mattr=+simd128,+bulk-memory,+nontrapping-fptoint,+sign-ext)
"$toolchain/swiftc" -target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo -Ounchecked "${features[@]}" \
  -parse-as-library -module-name CofferBarcode -package-name coffer -emit-module -emit-module-path "$work/CofferBarcode.swiftmodule" \
  -c -o "$work/tables.o" "${sources[@]}"
"$toolchain/swiftc" -target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo -Ounchecked "${features[@]}" \
  -parse-as-library -module-name CofferScan -package-name coffer -I "$work" -c -o "$work/scan.o" \
  Sources/CofferScan/*.swift Web/wasm/ScanExports.swift
"$toolchain/wasm-ld" --no-entry --strip-all --gc-sections \
  --export=coffer_scan_alloc --export=coffer_scan_free --export=coffer_scan --export=coffer_scan_answer \
  --export=coffer_scan_answer_count \
  -o "$work/reader.wasm" "$work/scan.o" "$work/tables.o" "$work/shim.o" \
  "$toolchain/../lib/swift/embedded/wasm32-unknown-none-wasm/libswiftUnicodeDataTables.a"
mkdir -p "$(dirname "$reader_output")"
mv "$work/reader.wasm" "$reader_output"
