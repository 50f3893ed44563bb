# Language standards, warnings, output layout and compiler cache: settings every target shares.

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 flags for nvcc 13
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)  # libcudart.so, one copy for the engine and its modules
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

# The build tree uses the install layout, so relative lookups (libferro finds its plugins in
# ../lib/ferro/plugins next to itself) behave the same before and after `cmake --install`.
include(GNUInstallDirs)
set(CMAKE_INSTALL_LIBDIR lib)
set(FERRO_PLUGIN_SUBDIR ${CMAKE_INSTALL_LIBDIR}/ferro/plugins)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/static)
set(FERRO_PLUGIN_OUTPUT_DIR ${CMAKE_BINARY_DIR}/${FERRO_PLUGIN_SUBDIR})

# Executables and libferro find each other through $ORIGIN in both trees.
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

add_library(ferro_warnings INTERFACE)
option(FERRO_WERROR "Treat warnings in ferro's own code as errors" ON)
target_compile_options(ferro_warnings INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow
                       -Wno-missing-field-initializers $<$<BOOL:${FERRO_WERROR}>:-Werror>>)
# nvcc: its own warnings, and the host compiler's on the host code of .cu files.
target_compile_options(ferro_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra
                       $<$<BOOL:${FERRO_WERROR}>:--Werror=all-warnings>>)
# GCC 12 at -O3 reports stringop-overread inside boost::container::small_vector's copies after
# inlining (a known false positive of GCC 12's access warnings); it names no bug of ours.
target_compile_options(ferro_warnings INTERFACE $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-stringop-overread>)

find_program(FERRO_CCACHE ccache)
if(FERRO_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    set(CMAKE_C_COMPILER_LAUNCHER ${FERRO_CCACHE})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${FERRO_CCACHE})
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${FERRO_CCACHE})
endif()

# Sanitizers for the asan/tsan presets: the same flags on every compile and link, so a
# sanitized host only ever loads sanitized plugins (TOOLCHAIN.md §6: the reverse aborts).
set(FERRO_SANITIZE "" CACHE STRING "Comma-separated -fsanitize= list (address,undefined | thread)")
if(FERRO_SANITIZE)
    set(FERRO_SANITIZE_FLAGS -fsanitize=${FERRO_SANITIZE} -fno-omit-frame-pointer)
    if(FERRO_SANITIZE MATCHES "undefined")
        list(APPEND FERRO_SANITIZE_FLAGS -fno-sanitize-recover=undefined)
    endif()
    # nvcc takes no -fsanitize: .cu files are built plain (a sanitized host loads plain code).
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${FERRO_SANITIZE_FLAGS}>")
    add_link_options(${FERRO_SANITIZE_FLAGS})
    # Keep plugins mapped after dlclose so leak reports can name their frames.
    add_compile_definitions(FERRO_SANITIZER_BUILD=1)
endif()

# Fuzzing (the fuzz preset): everything instrumented for libFuzzer's coverage, the fuzz targets
# linked with its driver (fuzz/CMakeLists.txt).
if(FERRO_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "FERRO_FUZZ needs clang (libFuzzer); configure with the fuzz preset")
    endif()
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()
