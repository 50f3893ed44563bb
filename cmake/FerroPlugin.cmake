# ferro_add_plugin(<target> SOURCES <src>... [LIBRARIES <lib>...] [OUTPUT_DIR <dir>])
#
# Builds a loadable ferro plugin: a MODULE library named lib<target>.so that exports exactly
# one symbol, ferro_plugin_query. Plugins see plugin_api/ only and link nothing from core/.
# -Wl,--no-undefined turns a missing symbol into a link error instead of a load-time failure;
# the version script hides the weak std:: template instantiations that -fvisibility=hidden
# alone leaves exported in Debug builds (TOOLCHAIN.md §3).
# Works in ferro's own build and, installed next to ferroConfig.cmake, in out-of-tree builds.
set(FERRO_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/ferro_plugin.map)

function(ferro_add_plugin target)
    cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SOURCES;LIBRARIES" ${ARGN})
    if(NOT ARG_OUTPUT_DIR)
        set(ARG_OUTPUT_DIR ${FERRO_PLUGIN_OUTPUT_DIR})
    endif()
    add_library(${target} MODULE ${ARG_SOURCES})
    set_target_properties(${target} PROPERTIES
        PREFIX "lib"
        C_VISIBILITY_PRESET hidden
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON
        LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR})
    target_compile_definitions(${target} PRIVATE FERRO_PLUGIN_MODULE)
    target_link_libraries(${target} PRIVATE ferro::plugin_api ${ARG_LIBRARIES})
    if(TARGET ferro_warnings)
        target_link_libraries(${target} PRIVATE ferro_warnings)
    endif()
    target_link_options(${target} PRIVATE -Wl,--version-script=${FERRO_PLUGIN_EXPORTS_MAP})
    # Fuzz builds (clang) leave the sanitizer and coverage runtimes to the fuzz target's executable.
    if(NOT FERRO_FUZZ)
        target_link_options(${target} PRIVATE -Wl,--no-undefined)
    endif()
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${FERRO_PLUGIN_EXPORTS_MAP})
endfunction()
