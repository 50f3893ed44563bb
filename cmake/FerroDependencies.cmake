# Every third-party dependency, found once (recipes: shared/TOOLCHAIN.md §2). All come from
# Debian packages that scripts/install-deps installs.

find_package(Threads REQUIRED)
# Boost.DLL and Boost.Container are header-only: Boost::headers. BOOST_DLL_USE_STD_FS lets
# Boost.DLL use std::filesystem, so libferro does not depend on libboost_filesystem.
find_package(Boost 1.74 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(dlpack REQUIRED)  # dlpack::dlpack (header only; DLPack 0.6 in Debian 12)
# BLAS and LAPACK through the reference interface's sonames (libblas.so.3, liblapack.so.3), so
# the implementation is chosen at run time, not here: Debian's alternatives for the system,
# LD_LIBRARY_PATH for one process; OpenBLAS by default (engines/cpu/src/blas_backend.hpp).
set(BLA_VENDOR Generic)
find_package(BLAS REQUIRED)
find_path(FERRO_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES x86_64-linux-gnu REQUIRED)
# LAPACK for the linalg plugin, called through LAPACKE's column-major *_work entry points
# (which pass straight through to LAPACK).
find_package(LAPACK REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LAPACKE REQUIRED IMPORTED_TARGET lapacke)
# FFTW 3.3 for the fft plugin, double and single precision, with its threads libraries (which
# have no pkg-config module of their own).
pkg_check_modules(FFTW3 REQUIRED IMPORTED_TARGET fftw3 fftw3f)
find_library(FERRO_FFTW3_THREADS fftw3_threads REQUIRED)
find_library(FERRO_FFTW3F_THREADS fftw3f_threads REQUIRED)

if(FERRO_BUILD_TESTS)
    find_package(Catch2 2 REQUIRED)
    include(Catch)
endif()
# ferro-inspect's command line and its --json output; the linalg oracle replay and the einsum
# instances are JSON too.
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
# The vulkan engine: Vulkan headers, glslc and spirv-val at build time (the loader is opened
# at run time). FERRO_BUILD_VULKAN=OFF, or none of them installed, leaves it out.
option(FERRO_BUILD_VULKAN "Build the vulkan engine plugin" ON)
if(FERRO_BUILD_VULKAN)
    find_package(Vulkan COMPONENTS glslc)
    find_program(SPIRV_VAL spirv-val)
    if(NOT TARGET Vulkan::Headers OR NOT TARGET Vulkan::glslc OR NOT SPIRV_VAL)
        message(WARNING "vulkan engine left out: Vulkan headers, glslc or spirv-val not found "
                        "(scripts/install-deps installs them)")
        set(FERRO_BUILD_VULKAN OFF)
    endif()
endif()
# The VkFFT fft module: Debian's VkFFT header and the glslang it compiles kernels with at run
# time (static libraries; its config forgets find_dependency(Threads), TOOLCHAIN.md §4b).
set(FERRO_BUILD_VKFFT OFF)
if(FERRO_BUILD_VULKAN)
    find_package(Threads REQUIRED)
    find_file(FERRO_VKFFT_HEADER vkFFT.h)
    # Debian's glslang config names glslangValidator (glslang-tools) and fails configure
    # outright when it is missing: look for it first.
    find_program(FERRO_GLSLANG_VALIDATOR glslangValidator)
    if(FERRO_GLSLANG_VALIDATOR)
        find_package(glslang CONFIG QUIET)
    endif()
    if(TARGET glslang::glslang AND FERRO_VKFFT_HEADER)
        set(FERRO_BUILD_VKFFT ON)
    else()
        message(WARNING "fft module for vulkan left out: vkFFT.h, glslang or glslangValidator not found "
                        "(scripts/install-deps installs libvkfft-dev, glslang-dev and glslang-tools)")
    endif()
endif()
# The cuda engine and its linalg and fft modules: nvcc, the runtime and the math libraries
# (never libcuda at link time, so the plugins load where there is no driver). Without nvcc, or
# with FERRO_BUILD_CUDA=OFF, they are left out.
option(FERRO_BUILD_CUDA "Build the cuda engine plugin and its modules" ON)
if(FERRO_BUILD_CUDA)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
        enable_language(CUDA)
        find_package(CUDAToolkit REQUIRED)
    else()
        message(WARNING "cuda plugins left out: no CUDA compiler (set CMAKE_CUDA_COMPILER to nvcc)")
        set(FERRO_BUILD_CUDA OFF)
    endif()
endif()
# MPI (Open MPI from Debian: libopenmpi-dev, openmpi-bin) for the comm family's mpi module and
# the multi-process tests. Without it, the comm plugin has its self module only.
option(FERRO_BUILD_MPI "Build the comm family's mpi module and its mpirun tests" ON)
if(FERRO_BUILD_MPI)
    find_package(MPI COMPONENTS C)
    if(NOT MPI_C_FOUND)
        message(WARNING "comm: mpi module left out: MPI not found (scripts/install-deps installs libopenmpi-dev)")
        set(FERRO_BUILD_MPI OFF)
    endif()
endif()
