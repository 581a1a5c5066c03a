#!/usr/bin/env bash
# Installs `coffer` and `coffer-server` into PREFIX/bin (default: ~/.local), with man pages and bash, zsh and fish
# completions generated from the command definitions. `coffer` runs the everyday commands itself and becomes
# PREFIX/libexec/coffer/coffer-full (the whole command tree) for the others.
#
#   scripts/install.sh [PREFIX]            build (release, Swift runtime linked in: starts ~4× faster) and install
#   scripts/install.sh --from DIR [PREFIX] install binaries already built in DIR (`swift build -c release` makes them
#                                          in .build/release); generate-manual is built when DIR lacks it
set -euo pipefail
cd "$(dirname "$0")/.."

from=
if [ "${1:-}" = "--from" ]; then
  from=${2:?"--from needs the directory of built binaries"}
  shift 2
fi
prefix=${1:-${PREFIX:-$HOME/.local}}

building=
if [ -z "$from" ]; then
  building=1
  scratch=.build-install
  SCRATCH=$scratch scripts/release-build.sh coffer coffer-full coffer-server generate-manual
  from="$scratch/release"
fi
for tool in coffer coffer-full coffer-server; do
  [ -x "$from/$tool" ] || { echo "install.sh: no $tool in $from (build them with: swift build -c release)" >&2; exit 1; }
done
# A plain `swift build` leaves out generate-manual (a product of a dependency): build it beside the binaries.
manual="$from/generate-manual"
if [ ! -x "$manual" ]; then
  manual=
  if command -v swift >/dev/null && swift build -c release --product generate-manual >&2; then
    manual="$(swift build -c release --show-bin-path)/generate-manual"
  else
    echo "install.sh: no generate-manual in $from, and it could not be built: man pages are not installed" >&2
  fi
fi

man="$prefix/share/man/man1"
bash_completions="$prefix/share/bash-completion/completions"
zsh_completions="$prefix/share/zsh/site-functions"
fish_completions="$prefix/share/fish/vendor_completions.d"
install -d "$prefix/bin" "$prefix/libexec/coffer" "$man" "$bash_completions" "$zsh_completions" "$fish_completions"
# First, so that the new `coffer` finds the new coffer-full from its first run.
install -m 0755 "$from/coffer-full" "$prefix/libexec/coffer/.coffer-full.new"
mv -f "$prefix/libexec/coffer/.coffer-full.new" "$prefix/libexec/coffer/coffer-full"
for tool in coffer coffer-server; do
  # Written beside and renamed, so a running copy is never overwritten in place.
  install -m 0755 "$from/$tool" "$prefix/bin/.$tool.new"
  mv -f "$prefix/bin/.$tool.new" "$prefix/bin/$tool"
  [ -z "$manual" ] || "$manual" "$prefix/bin/$tool" --multi-page --output-directory "$man" >/dev/null
  "$prefix/bin/$tool" --generate-completion-script bash >"$bash_completions/$tool"
  "$prefix/bin/$tool" --generate-completion-script zsh >"$zsh_completions/_$tool"
  "$prefix/bin/$tool" --generate-completion-script fish >"$fish_completions/$tool.fish"
done

# The web vault's files, where `coffer-server --web-vault` looks beside its bin/ (built if this checkout can).
web="$prefix/share/coffer/web-vault"
if [ -f Web/app/coffer-barcode.wasm ] || { [ -n "$building" ] && scripts/build-wasm.sh; }; then
  rm -rf "$web.new"
  install -d "$web.new/js"
  # Every file of the app: the service worker caches them all (its shell), and fails to install if one is missing.
  install -m 0644 Web/app/*.html Web/app/*.css Web/app/*.js Web/app/*.svg Web/app/*.png Web/app/*.webmanifest \
    Web/app/*.wasm "$web.new/"
  install -m 0644 Web/app/js/*.js "$web.new/js/"
  rm -rf "$web"
  mv "$web.new" "$web"
else
  echo "install.sh: the web vault is not installed: build its WebAssembly first (scripts/build-wasm.sh)" >&2
fi

echo "installed coffer $("$prefix/bin/coffer" --version) and coffer-server in $prefix/bin"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add $prefix/bin to PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")" ;;
esac
