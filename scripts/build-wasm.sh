#!/usr/bin/env bash
# Builds the web vault's barcode encoder: Sources/CofferBarcode (without its PNG writer, which needs zlib) and
# Web/wasm/BarcodeExports.swift, compiled with the installed toolchain's Embedded Swift for wasm32, linked with the
# tiny C shim Web/wasm/shim.c. Nothing is downloaded and the output is never committed (Web/app/coffer-barcode.wasm is
# ignored by git). Usage: scripts/build-wasm.sh [OUTPUT]; prints nothing on success.
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-Web/app/coffer-barcode.wasm}
toolchain=$(dirname "$(readlink -f "$(command -v swiftc)")")
work=$(mktemp -d /tmp/coffer-wasm.XXXXXX)
trap 'rm -rf "$work"' EXIT

sources=()
for file in Sources/CofferBarcode/*.swift; do
  [ "$(basename "$file")" = PNGWriter.swift ] || sources+=("$file")
done

"$toolchain/swiftc" -target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo -Osize \
  -parse-as-library -module-name CofferBarcode -package-name coffer -c -o "$work/barcode.o" "${sources[@]}" Web/wasm/BarcodeExports.swift
"$toolchain/clang" --target=wasm32-unknown-unknown -Os -ffreestanding -nostdlib -fno-builtin -c -o "$work/shim.o" \
  Web/wasm/shim.c
"$toolchain/wasm-ld" --no-entry --strip-all --gc-sections \
  --export=coffer_alloc --export=coffer_free --export=coffer_barcode --export=coffer_digits --export=coffer_answer \
  --export=coffer_answer_count --export=coffer_answer_width --export=coffer_answer_height \
  -o "$work/out.wasm" "$work/barcode.o" "$work/shim.o" \
  "$toolchain/../lib/swift/embedded/wasm32-unknown-none-wasm/libswiftUnicodeDataTables.a"
mkdir -p "$(dirname "$output")"
mv "$work/out.wasm" "$output"
