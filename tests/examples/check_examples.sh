#!/usr/bin/env bash
# usage: check_examples.sh SOURCE_DIR BUILD_DIR
# Builds the embedding app and the out-of-tree plugin with find_package(ferro), first against
# the build tree, then against a fresh install of it, and runs the app with the plugin.
set -euo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

quiet() {  # runs a command, showing its output only when it fails
    "$@" >"$work/log" 2>&1 || { cat "$work/log"; echo "FAILED: $*"; return 1; }
}

run_examples() {  # $1: CMAKE_PREFIX_PATH, $2: label
    local prefix=$1 label=$2
    quiet cmake -S "$src/examples/plugin" -B "$work/$label-plugin" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
    quiet cmake --build "$work/$label-plugin"
    quiet cmake -S "$src/examples/embed" -B "$work/$label-embed" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
    quiet cmake --build "$work/$label-embed"
    echo "== $label tree =="
    # An out-of-tree plugin built with ferro_add_plugin exports exactly the entry point.
    "$src/tests/abi/check_exports.sh" plugin "$work/$label-plugin/plugins/libferro_example.so"
    "$work/$label-embed/ferro_embed" "$work/$label-plugin/plugins/libferro_example.so"
    "$work/$label-embed/ferro_embed_cpp" "$work/$label-plugin/plugins/libferro_example.so"
}

run_examples "$build" build
quiet cmake --install "$build" --prefix "$work/prefix"
run_examples "$work/prefix" install
# pkg-config builds the C app against the install, and the docs and examples are installed.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
quiet cc -std=c11 -o "$work/embed-pc" "$src/examples/embed/embed.c" $(pkg-config --cflags --libs ferro) -lm
"$work/embed-pc" >/dev/null
[ "$(pkg-config --variable=plugindir ferro)" -ef "$work/prefix/lib/ferro/plugins" ]
for doc in README.md CHANGELOG.md plugin-guide.md abi.md examples/plugin/softplus.cpp examples/embed/embed.c; do
    [ -f "$work/prefix/share/doc/ferro/$doc" ] || { echo "FAILED: share/doc/ferro/$doc is not installed"; exit 1; }
done
echo "pkg-config builds against the install; docs and examples are in share/doc/ferro"
# The installed demo finds the installed plugin directory next to the installed libferro.
"$work/prefix/bin/ferro-demo" | grep -q "engine_null"
echo "installed ferro-demo loaded the installed null engine"
# The installed inspector probes the installed plugins (in child processes of itself).
# (Captured first: grep -q stops reading at its match, and under pipefail the writer's SIGPIPE
# would fail the check.)
listed=$("$work/prefix/bin/ferro-inspect" list)
grep -q "libferro_fft.so *loaded" <<<"$listed"
shown=$("$work/prefix/bin/ferro-inspect" show linalg --json)
grep -q '"name": "linalg.solve"' <<<"$shown"
echo "installed ferro-inspect lists and shows the installed plugins"
