#!/usr/bin/env bash
# Builds release binaries as they ship (install.sh uses it; so do the benches' figures), in .build-install/release
# or SCRATCH/release: the Swift runtime and Foundation linked in (`--static-swift-stdlib`), and on Linux the C++
# runtime too.
#
#   scripts/release-build.sh PRODUCT...        e.g. scripts/release-build.sh coffer coffer-full coffer-bench
#
# Why the C++ runtime: swiftc's static-stdlib link asks for `-lstdc++`, which finds Debian's libstdc++.so before
# the compiler's static archive. Loading that library and binding its symbols cost every run of every command about
# 0.6 ms, a tenth of `coffer code`. A directory holding only the archive, searched before the system's, makes the
# same request find the archive. Each binary is then checked: it must not need libstdc++.so.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/release-build.sh PRODUCT..." >&2; exit 64; }
scratch=${SCRATCH:-.build-install}

flags=()
static_cxx=
if [ "$(uname -s)" = Linux ]; then
  archive=$(clang -print-file-name=libstdc++.a 2>/dev/null || true)
  if [ -n "$archive" ] && [ "$archive" != libstdc++.a ] && [ -f "$archive" ]; then
    static_cxx="$PWD/$scratch/static-libstdc++"
    mkdir -p "$static_cxx"
    ln -sfn "$archive" "$static_cxx/libstdc++.a"
    flags=(-Xswiftc "-L$static_cxx")
  else
    echo "release-build.sh: the compiler has no static libstdc++ (libstdc++-12-dev): the binaries load libstdc++.so" >&2
  fi
fi

for product in "$@"; do
  swift build -c release --static-swift-stdlib --scratch-path "$scratch" "${flags[@]}" --product "$product"
  # Read whole before it is searched: under pipefail, grep -q leaving early could fail readelf and hide a match.
  if [ -n "$static_cxx" ] && grep -q 'NEEDED.*libstdc++' <<<"$(readelf -d "$scratch/release/$product")"; then
    echo "release-build.sh: $product still loads libstdc++.so: the static archive was not linked" >&2
    exit 1
  fi
done
