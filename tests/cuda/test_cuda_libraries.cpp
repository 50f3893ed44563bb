// The cuda plugins open cuBLAS and cuSOLVER at run time (engines/cuda/src/cuda_libraries.hpp):
// every function they call must be found in the toolkit's libraries, which need no GPU to load.
#include <ferro/cuda/libraries.hpp>

#include <catch2/catch.hpp>

TEST_CASE("cuda: cuBLAS and cuSOLVER open at run time with every function the plugins call", "[cuda-probe]") {
    std::string why;
    const ferro::cuda::CudaLibraries* lib = ferro::cuda::cuda_libraries(why);
    INFO(why);
    REQUIRE(lib != nullptr);
    CHECK(why.empty());
#define FERRO_CUDA_CHECK(library, name) CHECK(lib->name != nullptr);
    FERRO_CUDA_LIBRARY_FUNCTIONS(FERRO_CUDA_CHECK)
#undef FERRO_CUDA_CHECK
    // A second call answers from the first.
    CHECK(ferro::cuda::cuda_libraries(why) == lib);
}
