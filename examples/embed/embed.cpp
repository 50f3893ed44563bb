// Embedding ferro from C++ (ferro/ferro.hpp): built at the compiler's default language standard
// (the ferro::ferro target asks for the C++20 its headers need) with -Wall -Wextra -Wpedantic
// -Wconversion -Werror. With a plugin path as argument it also loads examples/plugin and checks
// example.softplus and its gradient, sigmoid, against their formulas.
//
// Exit status 0 when every result matches its expected value.
#include <ferro/ferro.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

bool close(double got, double want) { return std::abs(got - want) <= 1e-15 * (1 + std::abs(want)); }

bool softplus_check(ferro::Runtime& rt, const char* plugin) {
    rt.load_plugin(plugin);
    const std::vector<double> xs{-30.0, -1.0, 0.0, 40.0};
    ferro::Tensor x = rt.tensor<double>(xs, {4});
    x.set_requires_grad();
    const ferro::Tensor y = rt.call("example.softplus", {x})[0];
    y.sum().backward();
    const std::vector<double> values = y.to_vector<double>(), grads = x.grad().to_vector<double>();
    bool ok = true;
    for (size_t i = 0; i < xs.size(); ++i) {
        const double want = xs[i] > 0 ? xs[i] + std::log1p(std::exp(-xs[i])) : std::log1p(std::exp(xs[i]));
        const double sigmoid = 1 / (1 + std::exp(-xs[i]));
        std::printf("softplus(%g) = %.17g, d/dx = %.17g (want %.17g, %.17g)\n", xs[i], values[i], grads[i], want, sigmoid);
        ok = ok && close(values[i], want) && close(grads[i], sigmoid);
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        ferro::Runtime::Options options;
        options.autoload = false;  // this app loads what it names
        ferro::Runtime rt(options);
        const ferro::Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
        const ferro::Tensor b = rt.tensor<double>({1, 0, -1}, {3});
        const std::vector<double> c = a.matmul(b).to_vector<double>();
        std::printf("[[1 2 3] [4 5 6]] @ [1 0 -1] = [%g %g]\n", c[0], c[1]);
        bool ok = c == std::vector<double>{-2, -2};
        try {
            (void)a.matmul(a);
            ok = false;
        } catch (const ferro::Error& e) {
            std::printf("a @ a is refused: %s\n", e.what());
        }
        if (argc > 1) ok = softplus_check(rt, argv[1]) && ok;
        return ok ? 0 : 1;
    } catch (const ferro::Error& e) {
        std::fprintf(stderr, "ferro: %s\n", e.what());
        return 1;
    }
}
