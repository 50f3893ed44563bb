#!/usr/bin/env bash
# usage: check_headers.sh CC CXX PLUGIN_API_INCLUDE CORE_INCLUDE HEADER...
# Compiles each header alone, as strict C11 (pedantic errors, warnings fatal), and plugin.hpp as
# C++17, so every header is self-contained and plain C plugins and applications can use them.
set -euo pipefail
cc=$1 cxx=$2 inc=$3 core_inc=$4
shift 4
status=0
for h in "$@"; do
    if ! printf '#include <ferro/%s>\nint ferro_header_check_%s;\n' "$h" "${h//./_}" |
        "$cc" -x c -std=c11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I "$inc" \
            -I "$core_inc" -; then
        echo "FAIL: ferro/$h does not compile alone as C11"
        status=1
    fi
done
if ! printf '#include <ferro/plugin.hpp>\n' |
    "$cxx" -x c++ -std=c++17 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I "$inc" -; then
    echo "FAIL: ferro/plugin.hpp does not compile alone as C++17"
    status=1
fi
[ $status -eq 0 ] && echo "checked $# C headers and plugin.hpp"
exit $status
