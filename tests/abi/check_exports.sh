#!/usr/bin/env bash
# usage: check_exports.sh plugin|host LIBRARY
#   plugin: the library must export exactly one symbol, ferro_plugin_query.
#   host:   every exported symbol must start with ferro_.
set -euo pipefail
kind=$1 lib=$2
[ -f "$lib" ] || { echo "FAIL: $lib does not exist"; exit 1; }
# Defined dynamic symbols of code and data (T, D, B, R, W, V, u, i), without the version tags.
exports=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRWVui]$/ {print $3}' | sed 's/@.*//' | sort -u)
case $kind in
plugin)
    if [ "$exports" != "ferro_plugin_query" ]; then
        echo "FAIL: $lib exports:"; echo "$exports"; exit 1
    fi ;;
host)
    bad=$(echo "$exports" | grep -v '^ferro_' || true)
    if [ -n "$bad" ]; then
        echo "FAIL: $lib exports symbols outside ferro_*:"; echo "$bad"; exit 1
    fi
    [ -n "$exports" ] || { echo "FAIL: $lib exports nothing"; exit 1; } ;;
*) echo "usage: $0 plugin|host LIBRARY"; exit 2 ;;
esac
echo "$lib: $(echo "$exports" | wc -l) exported symbol(s), all allowed"
