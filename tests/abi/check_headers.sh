#!/usr/bin/env bash
# usage: check_headers.sh CC CXX PLUGIN_API_INCLUDE CORE_INCLUDE HEADER...
# Compiles each header alone: the C headers (*.h) as strict C11 (pedantic errors, warnings fatal),
# so plain C plugins and applications can use them; every header as C++20 with the warnings
# users turn on (-Wall -Wextra -Wpedantic -Wconversion -Wshadow, fatal), so including ferro's
# headers never breaks a strict build. FERRO_EXTRA_INCLUDE: a system include directory more (the
# CUDA toolkit's, for the helpers of CUDA plugins).
set -euo pipefail
cc=$1 cxx=$2 inc=$3 core_inc=$4
shift 4
status=0
c_headers=0
for h in "$@"; do
    if [[ $h == *.h ]]; then
        c_headers=$((c_headers + 1))
        if ! printf '#include <ferro/%s>\nint ferro_header_check_%s;\n' "$h" "${h//./_}" |
            "$cc" -x c -std=c11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I "$inc" \
                -I "$core_inc" -; then
            echo "FAIL: ferro/$h does not compile alone as C11"
            status=1
        fi
    fi
    if ! printf '#include <ferro/%s>\n' "$h" |
        "$cxx" -x c++ -std=c++20 -pedantic-errors -Wall -Wextra -Wconversion -Wshadow -Werror -fsyntax-only \
            -I "$inc" -I "$core_inc" ${FERRO_EXTRA_INCLUDE:+-isystem "$FERRO_EXTRA_INCLUDE"} -; then
        echo "FAIL: ferro/$h does not compile alone as C++20 under strict warnings"
        status=1
    fi
done
[ $status -eq 0 ] && echo "checked $c_headers headers as C11 and $# as C++20"
exit $status
