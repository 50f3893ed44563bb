#!/usr/bin/env bash
# usage: check_layering.sh SOURCE_DIR
# The contract for third parties: a target under plugins/ or engines/ builds from its own
# directory and plugin_api/ alone, as a plugin outside this repository must. No source there
# includes a file by a relative path that leaves its directory, and no CMakeLists there names a
# file of another directory of the tree (another target's sources or src/).
set -euo pipefail
cd "$1"
status=0
for dir in plugins/*/ engines/*/; do
    dir=${dir%/}
    root=$(realpath "$dir")
    while IFS=: read -r file _ line; do
        included=$(sed -E 's/.*#include[[:space:]]*"([^"]+)".*/\1/' <<<"$line")
        target=$(realpath -m "$(dirname "$file")/$included")
        if [[ $target != "$root"/* ]]; then
            echo "FAIL: $file includes $included, outside $dir"
            status=1
        fi
    done < <(grep -rnE '#include[[:space:]]*"\.\./' "$dir" --include='*.cpp' --include='*.hpp' --include='*.h' \
                 --include='*.cu' --include='*.cuh' || true)
    if grep -nE '(^|[^#])(\.\./|\$\{(PROJECT|CMAKE)_SOURCE_DIR\}/(core|plugins|engines))' "$dir/CMakeLists.txt"; then
        echo "FAIL: $dir/CMakeLists.txt names files of another directory"
        status=1
    fi
    # Nor links another target's code (a support library of an engine, say): only plugin_api,
    # the warning flags and the targets this file defines.
    own=$(grep -oE '(add_library|ferro_add_plugin)\(ferro_[a-z_]+' "$dir/CMakeLists.txt" | sed 's/.*(//' | paste -sd'|')
    if grep -E '(LIBRARIES|target_link_libraries)' "$dir/CMakeLists.txt" | grep -oE '\bferro_[a-z_]+' |
        grep -vxE "ferro_warnings${own:+|$own}"; then
        echo "FAIL: $dir/CMakeLists.txt links another ferro target"
        status=1
    fi
done
[ $status -eq 0 ] && echo "plugins/ and engines/ include nothing of another target"
exit $status
