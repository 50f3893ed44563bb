// Replays the tensor-ad-oracles database (../shared/data/tensor-ad-oracles, PyTorch references
// and central differences for linalg derivatives) against every linalg op ferro has: each
// probe's JVP, VJP and HVP (forward over reverse) must agree with PyTorch's within the
// tolerance the database's audit suggests for that op, family and dtype, and the JVP with the
// stored finite differences. Inputs are computed in double precision (the references are, see
// tolerance_audit.json's "what"). Error records (a loss that depends on the gauge of complex
// singular/eigen vectors) must fail. Ops ferro does not have yet are counted and listed.
#include "linalg_test.hpp"
#include "shared_data.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

using namespace ferro;
using namespace ferro::test;
using json = nlohmann::json;
using cd = std::complex<double>;
namespace fs = std::filesystem;

namespace {

fs::path oracle_dir() {
    const fs::path data = shared_data_dir("tensor-ad-oracles");
    return data.empty() ? data : data / "tensor-ad-oracles";
}

bool complex_dtype(const std::string& d) { return d == "complex64" || d == "complex128"; }

// A stored tensor, in double precision (f64 or c128).
Tensor tensor_of(const Runtime& rt, const json& t) {
    Shape shape = t.at("shape").get<Shape>();
    const json& data = t.at("data");
    if (complex_dtype(t.at("dtype").get<std::string>())) {
        std::vector<cd> v;
        for (const json& z : data) v.emplace_back(z.at(0).get<double>(), z.at(1).get<double>());
        return rt.tensor<cd>(v, shape);
    }
    return rt.tensor<double>(data.get<std::vector<double>>(), shape);
}

std::vector<cd> values_of(const Tensor& t) {
    if (t.numel() == 0) return {};
    return t.to(DType::c128).to_vector<cd>();
}

// max |want - got| / max(1, max |got|) over a probe's tensors (tolerance_audit.json's measure).
struct RelError {
    double diff = 0, scale = 1;
    void add(const std::vector<cd>& got, const std::vector<cd>& want) {
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            diff = std::max(diff, std::abs(got[i] - want[i]));
            scale = std::max(scale, std::abs(got[i]));
        }
    }
    double value() const { return diff / scale; }
};

using Outputs = std::map<std::string, Tensor>;
using Fn = std::function<Outputs(const std::vector<Tensor>&)>;

bool kwarg(const json& rec, const char* name, bool fallback) {
    const json& k = rec.value("op_kwargs", json::object());
    return k.is_object() && k.contains(name) ? k.at(name).get<bool>() : fallback;
}
std::string kwarg_str(const json& rec, const char* name, const std::string& fallback) {
    const json& k = rec.value("op_kwargs", json::object());
    return k.is_object() && k.contains(name) ? k.at(name).get<std::string>() : fallback;
}

// A norm order: a number, or "inf" / "-inf".
double order_of(const json& v) {
    if (v.is_string()) return v.get<std::string>() == "inf" ? INFINITY : -INFINITY;
    return v.get<double>();
}
// `dim` of a norm: absent, an int or a list.
std::vector<int64_t> dims_of(const json& k) {
    if (!k.is_object() || !k.contains("dim") || k.at("dim").is_null()) return {};
    if (k.at("dim").is_number()) return {k.at("dim").get<int64_t>()};
    return k.at("dim").get<std::vector<int64_t>>();
}

Tensor hermitian_part(const Tensor& a) { return a + mH(a); }  // the database evaluates these ops on A + A^H

// The record's function, by op and observable; nullopt for ops ferro does not have.
std::optional<Fn> function_of(const json& rec) {
    const std::string op = rec.at("op"), obs = rec.at("observable").at("kind");
    if (op == "solve" || op == "solve_ex") return [](auto& x) { return Outputs{{"value", linalg::solve(x[0], x[1])}}; };
    if (op == "inv" || op == "inv_ex") return [](auto& x) { return Outputs{{"value", linalg::inv(x[0])}}; };
    if (op == "det") return [](auto& x) { return Outputs{{"value", linalg::det(x[0])}}; };
    if (op == "slogdet")
        return [](auto& x) {
            auto [s, l] = linalg::slogdet(x[0]);
            return Outputs{{"output_0", s}, {"output_1", l}};
        };
    if (op == "cholesky" || op == "cholesky_ex") {
        const bool upper = kwarg(rec, "upper", false);
        return [upper](auto& x) { return Outputs{{"value", linalg::cholesky(hermitian_part(x[0]), upper)}}; };
    }
    if (op == "qr") {
        const std::string mode = kwarg_str(rec, "mode", "reduced");
        return [mode](auto& x) {
            auto [q, r] = linalg::qr(x[0], mode);
            return Outputs{{"output_0", q}, {"output_1", r}};
        };
    }
    if (op == "eigh") {
        const std::string uplo = kwarg_str(rec, "UPLO", "L");
        return [uplo](auto& x) {
            auto [w, v] = linalg::eigh(hermitian_part(x[0]), uplo);
            return Outputs{{"values", w}, {"vectors", v.abs()}};
        };
    }
    if (op == "eigvalsh") {
        const std::string uplo = kwarg_str(rec, "UPLO", "L");
        return [uplo](auto& x) { return Outputs{{"value", linalg::eigvalsh(hermitian_part(x[0]), uplo)}}; };
    }
    if (op == "svd") {
        const bool full = kwarg(rec, "full_matrices", true);
        return [full, obs](auto& x) {
            auto [u, s, vh] = linalg::svd(x[0], full);
            const int64_t k = s.shape().back();
            const Tensor U = u.slice(-1, 0, k), Vh = vh.slice(-2, 0, k);  // the part A determines
            if (obs == "svd_u_abs") return Outputs{{"u", U.abs()}};
            if (obs == "svd_s") return Outputs{{"s", s}};
            if (obs == "svd_vh_abs") return Outputs{{"s", s}, {"vh", Vh.abs()}};
            return Outputs{{"s", s}, {"uvh", matmul(U, Vh)}};
        };
    }
    if (op == "svdvals") return [](auto& x) { return Outputs{{"value", linalg::svdvals(x[0])}}; };
    if (op == "lu")
        return [](auto& x) {
            auto [p, l, u] = linalg::lu(x[0]);
            return Outputs{{"output_1", l}, {"output_2", u}};
        };
    if (op == "lu_factor" || op == "lu_factor_ex")
        return [](auto& x) { return Outputs{{"output_0", linalg::lu_factor(x[0]).LU}}; };
    if (op == "lu_solve") {  // input a is the packed LU; the pivots are x[2] (see Replay::run)
        const bool left = kwarg(rec, "left", true), adjoint = kwarg(rec, "adjoint", false);
        return [left, adjoint](auto& x) { return Outputs{{"value", linalg::lu_solve(x[0], x[2], x[1], left, adjoint)}}; };
    }
    if (op == "solve_triangular") {
        const bool upper = kwarg(rec, "upper", false), left = kwarg(rec, "left", true), unit = kwarg(rec, "unitriangular", false);
        return [=](auto& x) { return Outputs{{"value", linalg::triangular_solve(x[0], x[1], upper, left, unit)}}; };
    }
    if (op == "eig")
        return [](auto& x) {
            auto [w, v] = linalg::eig(x[0]);
            return Outputs{{"values", w}, {"vectors", v.abs()}};
        };
    if (op == "eigvals") return [](auto& x) { return Outputs{{"value", linalg::eigvals(x[0])}}; };
    if (op == "matrix_exp") return [](auto& x) { return Outputs{{"value", linalg::matrix_exp(x[0])}}; };
    if (op == "vector_norm") {
        const json& k = rec.value("op_kwargs", json::object());
        const double ord = k.is_object() && k.contains("ord") ? order_of(k.at("ord")) : 2.0;
        const bool keepdim = kwarg(rec, "keepdim", false);
        return [ord, keepdim, axes = dims_of(k)](auto& x) {
            return Outputs{{"value", linalg::vector_norm(x[0], ord, axes, keepdim)}};
        };
    }
    if (op == "lstsq_grad_oriented") {  // PyTorch's sample: (solution, residuals) of lstsq(a, b, driver)
        const std::string driver = kwarg_str(rec, "driver", "gelsd");
        return [driver](auto& x) {
            const auto r = linalg::lstsq(x[0], x[1], std::nullopt, driver);
            return Outputs{{"output_0", r.solution}, {"output_1", r.residuals}};
        };
    }
    if (op == "cond") {
        const json& args = rec.value("op_args", json::array());
        const json& k = rec.value("op_kwargs", json::object());
        json p = args.is_array() && !args.empty() ? args.at(0) : (k.is_object() && k.contains("p") ? k.at("p") : json());
        const std::string name = p.is_null() ? "2" : p.is_string() ? p.get<std::string>() : std::to_string(p.get<int>());
        return [name](auto& x) { return Outputs{{"value", linalg::cond(x[0], name)}}; };
    }
    if (op == "matrix_norm" || op == "norm") {
        // matrix_norm(A, ord, dim, keepdim) positionally; norm(x, ord=None, dim=None, keepdim) as
        // torch.linalg.norm: a 2-tuple dim or a 2-d input without dim is a matrix norm, else a
        // vector norm (the flattened 2-norm when ord is None).
        const json& args = rec.value("op_args", json::array());
        const json& k = rec.value("op_kwargs", json::object());
        json ord = args.is_array() && !args.empty() ? args.at(0) : (k.is_object() && k.contains("ord") ? k.at("ord") : json());
        std::vector<int64_t> axes = op == "matrix_norm" ? args.at(1).get<std::vector<int64_t>>() : dims_of(k);
        const bool keepdim = op == "matrix_norm" ? args.at(2).get<bool>() : kwarg(rec, "keepdim", false);
        const int ndim = static_cast<int>(rec.at("inputs").at("a").at("shape").size());
        const bool matrix = op == "matrix_norm" || axes.size() == 2 || (axes.empty() && !ord.is_null() && ndim == 2);
        if (matrix) {
            std::string name = ord.is_null() ? "fro" : ord.is_string() ? ord.get<std::string>() : std::to_string(ord.get<int>());
            if (axes.empty()) axes = {-2, -1};
            return [name, axes, keepdim](auto& x) { return Outputs{{"value", linalg::matrix_norm(x[0], name, axes, keepdim)}}; };
        }
        const double p = ord.is_null() ? 2.0 : order_of(ord);
        return [p, axes, keepdim](auto& x) { return Outputs{{"value", linalg::vector_norm(x[0], p, axes, keepdim)}}; };
    }
    if (op == "pinv" || op == "pinv_singular" || op == "pinv_hermitian") {
        linalg::Tolerance t;
        const json& k = rec.value("op_kwargs", json::object());
        if (k.is_object() && k.contains("rtol") && !k.at("rtol").is_null()) t.rtol = k.at("rtol").get<double>();
        if (k.is_object() && k.contains("atol") && !k.at("atol").is_null()) t.atol = k.at("atol").get<double>();
        t.hermitian = kwarg(rec, "hermitian", false);
        if (op == "pinv_singular") {  // PyTorch's sample: a low-rank product, pinv(a b^T)
            return [t](auto& x) { return Outputs{{"value", linalg::pinv(matmul(x[0], x[1].mT()), t)}}; };
        }
        return [t, herm = t.hermitian](auto& x) {
            return Outputs{{"value", linalg::pinv(herm ? hermitian_part(x[0]) : x[0], t)}};
        };
    }
    return std::nullopt;
}

// The outputs named `names`, in that order ("value" also answers to "output_0").
std::vector<Tensor> pick(const Outputs& out, const std::vector<std::string>& names) {
    std::vector<Tensor> v;
    for (const auto& n : names) {
        auto it = out.find(n);
        if (it == out.end() && n == "output_0") it = out.find("value");
        REQUIRE(it != out.end());
        v.push_back(it->second);
    }
    return v;
}

// Every valid pivot vector for a batch of n x n LU factors (entry j in [j + 1, n]), the
// identity first.
std::vector<Tensor> pivot_candidates(const Runtime& rt, const Shape& lu_shape) {
    const int64_t n = lu_shape.back();
    Shape shape(lu_shape.begin(), lu_shape.end() - 1);
    const int64_t count = numel(shape);
    std::vector<Tensor> out;
    std::vector<int64_t> piv(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) piv[static_cast<size_t>(i)] = i % n + 1;
    while (true) {
        out.push_back(rt.tensor<int64_t>(piv, shape));
        size_t i = 0;  // next combination, odometer style
        for (; i < piv.size(); ++i) {
            const int64_t j = static_cast<int64_t>(i) % n;
            if (piv[i] < n) {
                ++piv[i];
                break;
            }
            piv[i] = j + 1;
        }
        if (i == piv.size() || out.size() >= 4096) return out;
    }
}

struct Replay {
    const Runtime& rt;
    const json& audit;
    std::map<std::string, int> replayed, skipped;
    int probes = 0;

    const json& audit_of(const json& rec) const {
        const std::string key = rec.at("op").get<std::string>() + "/" + rec.at("family").get<std::string>() + "/" +
                                rec.at("dtype").get<std::string>();
        INFO(key);
        REQUIRE(audit.at("families").contains(key));
        return audit.at("families").at(key);
    }

    void run(const json& rec) {
        const std::string op = rec.at("op"), id = rec.at("case_id");
        const auto f = function_of(rec);
        if (!f) {
            ++skipped[op];
            return;
        }
        ++replayed[op];
        INFO(id);
        std::vector<std::string> in_names;
        std::vector<Tensor> inputs;
        for (const auto& [name, t] : rec.at("inputs").items()) {
            in_names.push_back(name);
            inputs.push_back(tensor_of(rt, t));
        }
        if (rec.at("expected_behavior") == "error") return expect_error(rec, inputs);
        const json& measured = audit_of(rec);
        const double tol = measured.at("suggested_rel_tol_vs_stored_pytorch_ref").get<double>();
        // The stored differences were taken in the record's dtype (step and rounding of float32
        // for the single-precision records): the audit measured their distance from exact over
        // the family; a few single-precision probes sit up to 3.4x beyond that maximum while our
        // JVP matches PyTorch's to 1e-7. This check is the secondary one.
        const double fd_tol = std::max(1e-8, 5 * measured.at("max_rel_err_fd_jvp_vs_f64").get<double>());
        for (const json& probe : rec.at("probes")) {
            ++probes;
            INFO("probe " << probe.at("probe_id").get<std::string>() << ", tolerance " << tol);
            std::vector<std::string> out_names;
            std::vector<Tensor> cotangents, directions;
            for (const auto& [name, t] : probe.at("cotangent").items()) {
                out_names.push_back(name);
                cotangents.push_back(tensor_of(rt, t));
            }
            for (const auto& n : in_names) directions.push_back(tensor_of(rt, probe.at("direction").at(n)));
            const json& ref = probe.at("pytorch_ref");
            // JVP, against PyTorch and against the stored central differences.
            auto jvp_errors = [&](const Fn& fn, const std::vector<Tensor>& x) {
                const auto [ys, ts] = jvp([&](const std::vector<Tensor>& in) { return pick(fn(in), out_names); }, x, directions);
                std::pair<RelError, RelError> e;
                for (size_t k = 0; k < out_names.size(); ++k) {
                    const auto got = ts[k] ? values_of(ts[k]) : std::vector<cd>(static_cast<size_t>(ys[k].numel()));
                    e.first.add(got, values_of(tensor_of(rt, ref.at("jvp").at(out_names[k]))));
                    e.second.add(got, values_of(tensor_of(rt, probe.at("fd_ref").at("jvp").at(out_names[k]))));
                }
                return e;
            };
            Fn fn = *f;
            if (op == "lu_solve") {
                // The records keep LU but not its pivots. Take the first pivot vector (the identity
                // first) under which our JVP reproduces PyTorch's; the VJP and HVP are then checked
                // independently with those pivots.
                const Fn solve = fn;
                for (const Tensor& piv : pivot_candidates(rt, inputs[0].shape())) {
                    fn = [solve, piv](const std::vector<Tensor>& x) { return solve({x[0], x[1], piv}); };
                    if (jvp_errors(fn, inputs).first.value() <= tol) break;
                }
            }
            const auto [jvp_err, fd_err] = jvp_errors(fn, inputs);
            INFO("jvp relative error " << jvp_err.value() << ", vs finite differences " << fd_err.value());
            CHECK(jvp_err.value() <= tol);
            CHECK(fd_err.value() <= fd_tol);
            // VJP.
            std::vector<Tensor> leaves;
            for (const Tensor& x : inputs) {
                Tensor leaf = x.detach();
                leaf.set_requires_grad();
                leaves.push_back(leaf);
            }
            const std::vector<Tensor> outs = pick(fn(leaves), out_names);
            const std::vector<Tensor> g = vjp(outs, leaves, cotangents);
            RelError vjp_err;
            for (size_t i = 0; i < in_names.size(); ++i) {
                const auto got = g[i] ? values_of(g[i]) : std::vector<cd>(static_cast<size_t>(leaves[i].numel()));
                vjp_err.add(got, values_of(tensor_of(rt, ref.at("vjp").at(in_names[i]))));
            }
            INFO("vjp relative error " << vjp_err.value());
            CHECK(vjp_err.value() <= tol);
            // HVP: forward over reverse, the VJP's derivative along the direction.
            if (!ref.contains("hvp")) continue;
            std::vector<Tensor> duals;
            for (size_t i = 0; i < inputs.size(); ++i) {
                Tensor d = make_dual(inputs[i].detach(), directions[i]);
                d.set_requires_grad();
                duals.push_back(d);
            }
            const std::vector<Tensor> hg = vjp(pick(fn(duals), out_names), duals, cotangents);
            RelError hvp_err;
            for (size_t i = 0; i < in_names.size(); ++i) {
                const Tensor t = hg[i] ? hg[i].tangent() : Tensor();
                const auto got = t ? values_of(t) : std::vector<cd>(static_cast<size_t>(inputs[i].numel()));
                hvp_err.add(got, values_of(tensor_of(rt, ref.at("hvp").at(in_names[i]))));
            }
            INFO("hvp relative error " << hvp_err.value());
            CHECK(hvp_err.value() <= std::max(tol, 1e-10));
        }
    }

    // PyTorch's test_invariance_error_spectral_decompositions: gauge-dependent losses must fail.
    void expect_error(const json& rec, const std::vector<Tensor>& inputs) {
        REQUIRE(rec.at("comparison").at("reason_code") == "gauge_ill_defined");
        Tensor a = inputs[0].detach();
        a.set_requires_grad();
        const std::string op = rec.at("op");
        check_error(
            [&] {
                if (op == "svd") {
                    const auto usv = linalg::svd(a, false);
                    (usv.U + usv.Vh).sum().abs().backward();
                } else if (op == "eigh") {
                    linalg::eigh(hermitian_part(a)).eigenvectors.sum().abs().backward();
                } else {
                    linalg::eig(a).eigenvectors.sum().abs().backward();
                }
            },
            FERRO_NOT_DIFFERENTIABLE, "gradient is ill-defined");
    }
};

}  // namespace

TEST_CASE("linalg oracles: JVP, VJP and HVP agree with PyTorch and finite differences on tensor-ad-oracles", "[linalg]") {
    const fs::path dir = oracle_dir();
    if (dir.empty()) FAIL("tensor-ad-oracles not found: set FERRO_SHARED_DATA, or keep shared/data/ next to the repository");
    std::ifstream audit_file(dir / "tolerance_audit.json");
    const json audit = json::parse(audit_file);
    const Runtime rt = linalg_runtime();
    Replay replay{rt, audit, {}, {}, 0};
    std::set<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir / "cases")) {
        if (entry.path().extension() == ".jsonl") files.insert(entry.path());
    }
    for (const fs::path& file : files) {
        std::ifstream in(file);
        std::string line;
        while (std::getline(in, line)) {
            // Bare Infinity tokens (norm orders) are not JSON: make them strings ("inf", "-inf").
            for (size_t at; (at = line.find("-Infinity")) != std::string::npos;) line.replace(at, 9, "\"-inf\"");
            for (size_t at; (at = line.find("Infinity")) != std::string::npos;) line.replace(at, 8, "\"inf\"");
            replay.run(json::parse(line));
        }
    }
    std::ostringstream summary;
    for (const auto& [op, n] : replay.replayed) summary << op << " " << n << ", ";
    summary << "probes " << replay.probes << "; not yet in ferro: ";
    for (const auto& [op, n] : replay.skipped) summary << op << " " << n << ", ";
    WARN(summary.str());
    CHECK(replay.replayed.size() >= 20);
}
