// ferro-demo: what is installed, and one real computation.
//
// Creates a runtime that loads every plugin on the search path, prints the search path,
// plugins, engines (and why an engine kind has no device), op families and load diagnostics,
// then finds the largest eigenvalue of the 1-D Laplacian by power iteration with core ops and
// compares it with the analytic value 2 - 2 cos(n pi / (n + 1)); with the linalg plugin
// installed, also with linalg.eigvalsh and the gradient of that eigenvalue (v v^T); with the fft
// plugin, the whole spectrum of the periodic Laplacian as the DFT of its first column.
#include <ferro/ferro.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace {

void print_inventory(const ferro::Runtime& rt) {
    const ferro::Inventory inv = rt.inventory();
    uint32_t major = 0, minor = 0;
    ferro_abi_version(&major, &minor);
    std::printf("ferro %s, plugin ABI %u.%u, snapshot epoch %llu\n\n", ferro_version(), major, minor,
                static_cast<unsigned long long>(inv.epoch));
    std::printf("plugin search path:\n");
    for (const auto& d : inv.search_path) {
        std::printf("  %-50s (%s)%s\n", d.path.c_str(), d.origin.c_str(), d.exists ? "" : " [missing]");
    }
    std::printf("\nplugins:\n");
    for (const auto& p : inv.plugins) {
        std::printf("  %-16s %-8s ABI %u.%u  %s\n", p.name.c_str(), p.version.c_str(), p.abi_major, p.abi_minor,
                    p.builtin ? "(built in)" : p.path.c_str());
    }
    std::printf("\nengines:\n");
    for (const auto& e : inv.engines) std::printf("  %-12s %s [%s]\n", e.name.c_str(), e.device.c_str(), e.plugin.c_str());
    for (const auto& k : inv.engine_kinds) {
        if (k.device_count == 0) std::printf("  %-12s no device: %s [%s]\n", k.kind.c_str(), k.reason.c_str(), k.plugin.c_str());
    }
    std::map<std::string, int> per_family;
    for (const auto& o : inv.ops) ++per_family[o.family];
    std::printf("\nop families:\n");
    for (const auto& [family, count] : per_family) std::printf("  %-12s %d ops\n", family.c_str(), count);
    std::printf("\nload diagnostics: %zu\n", inv.diagnostics.size());
    for (const auto& d : inv.diagnostics) {
        std::printf("  %s\n    stage %s, %s: %s\n", d.file.c_str(), d.stage.c_str(), ferro_status_code_name(d.code),
                    d.message.c_str());
    }
}

// The n x n Laplacian tridiag(-1, 2, -1).
ferro::Tensor laplacian(const ferro::Runtime& rt, int64_t n) {
    using ferro::Attr;
    const ferro::Tensor upper = rt.call("core.eye", {}, {Attr("n", n), Attr("k", 1)})[0];
    return 2.0 * rt.eye(n) - upper - upper.transpose();
}

// Its largest eigenvalue by power iteration.
double laplacian_top_eigenvalue(const ferro::Runtime& rt, int64_t n, int iterations) {
    const ferro::Tensor a = laplacian(rt, n);
    ferro::Tensor v = rt.rand({n, 1}, ferro::DType::f64, 2026);
    for (int i = 0; i < iterations; ++i) {
        const ferro::Tensor w = a.matmul(v);
        v = w / (w * w).sum().sqrt();
    }
    return (v * a.matmul(v)).sum().item<double>();  // Rayleigh quotient of a unit vector
}

}  // namespace

int main() {
    try {
        ferro::Runtime rt;
        print_inventory(rt);
        const int64_t n = 16;
        const double estimate = laplacian_top_eigenvalue(rt, n, 600);
        const double exact = 2.0 - 2.0 * std::cos(static_cast<double>(n) * M_PI / static_cast<double>(n + 1));
        std::printf("\nlargest eigenvalue of the %lld-point 1-D Laplacian by power iteration:\n", static_cast<long long>(n));
        std::printf("  ferro    %.15f\n  analytic %.15f\n  relative error %.1e\n", estimate, exact,
                    std::abs(estimate - exact) / exact);
        bool ok = std::abs(estimate - exact) / exact < 1e-9;
        bool have_linalg = false;
        for (const auto& op : rt.inventory().ops) have_linalg = have_linalg || op.name == "linalg.eigvalsh";
        if (have_linalg) {
            // d lambda_max / dA = v v^T for the top eigenvector v: its trace is |v|^2 = 1.
            ferro::Tensor a = laplacian(rt, n);
            a.set_requires_grad();
            const ferro::Tensor top = ferro::linalg::eigvalsh(a).slice(0, n - 1, n).sum();
            top.backward();
            const double trace = a.grad().diagonal().sum().item<double>();
            std::printf("  linalg.eigvalsh %.15f (relative error %.1e), trace of its gradient %.15f\n", top.item<double>(),
                        std::abs(top.item<double>() - exact) / exact, trace);
            ok = ok && std::abs(top.item<double>() - exact) / exact < 1e-13 && std::abs(trace - 1.0) < 1e-12;
        }
        bool have_fft = false;
        for (const auto& op : rt.inventory().ops) have_fft = have_fft || op.name == "fft.rfft";
        if (have_fft) {
            // A circulant matrix is diagonalised by the DFT: the periodic Laplacian's eigenvalues
            // are the DFT of its first column [2, -1, 0, ..., 0, -1], 2 - 2 cos(2 pi k / n).
            std::vector<double> column(static_cast<size_t>(n), 0.0);
            column[0] = 2;
            column[1] = column[static_cast<size_t>(n - 1)] = -1;
            const std::vector<double> spectrum = ferro::fft::rfft(rt.tensor<double>(column, {n})).real().to_vector<double>();
            double worst = 0;
            for (size_t k = 0; k < spectrum.size(); ++k) {
                worst = std::max(
                    worst,
                    std::abs(spectrum[k] - (2.0 - 2.0 * std::cos(2 * M_PI * static_cast<double>(k) / static_cast<double>(n)))));
            }
            std::printf("  fft.rfft: the %zu distinct eigenvalues of the periodic Laplacian, largest error %.1e\n",
                        spectrum.size(), worst);
            ok = ok && worst < 1e-14;
        }
        return ok ? 0 : 1;
    } catch (const ferro::Error& e) {
        std::fprintf(stderr, "ferro-demo: %s: %s\n", e.code_name(), e.what());
        return 1;
    }
}
