// VJP and JVP rules of the fft family. Every transform is linear in its input:
//   y = scale * D(fit(x))
// with fit the zero-padding / truncation of each axis to the transform length, D a DFT (c2c,
// r2c keeping the non-negative frequencies, c2r from a Hermitian half spectrum) and scale
// numpy's norm factor. The JVP is the op applied to the tangent. The VJP is, in reverse,
//   c2c: the DFT of the opposite sign with the same scale (ifftn for fftn, and back);
//   r2c: the zero-padded half spectrum through the inverse c2c DFT, real part;
//   c2r: the r2c DFT of the cotangent, the frequencies whose mirror images the half spectrum
//        leaves out counted twice (1 .. n - (n/2 + 1) on the halved axis);
// then the adjoint of fit (truncation <-> zero-padding). hfft and ihfft conjugate around
// these. The rules call fft ops themselves, so they are differentiable again.
#include "fft.hpp"

#include <ferro/rules.hpp>

#include <array>
#include <span>
#include <string>
#include <vector>

namespace ferro::fft {
namespace {

using plugin::Arg;
using plugin::TensorRef;

class Ops : public plugin::Rules {
public:
    Ops(const ferro_host_api* host, const ferro_vjp_args& a) : Rules(host, a, rule_calls()) {}
    Ops(const ferro_host_api* host, const ferro_jvp_args& a) : Rules(host, a, rule_calls()) {}

    const char* engine(Arg a) const { return host()->tensor_engine(a.get()); }
    // An N-D transform of the family with every length and axis explicit.
    TensorRef transform(Op op, Arg x, const std::vector<int64_t>& lengths, const std::vector<int64_t>& axes, Norm norm,
                        const ferro_attr_value& planner) const {
        return call(rule_op(op), {x},
                    {plugin::attr_i64s("s", lengths), plugin::attr_i64s("axes", axes), plugin::attr_str("norm", norm_name(norm)),
                     plugin::attr_str("planner", planner.v.str)});
    }
};

// The adjoint of fit: each transformed axis back from its fitted length to the input's,
// truncating where fit padded and zero-padding where it truncated.
TensorRef unfit(const Ops& r, TensorRef g, const Transform& t) {
    for (int64_t a : t.axes) {
        const int64_t fitted = t.fit_shape[static_cast<size_t>(a)], given = t.in_shape[static_cast<size_t>(a)];
        if (given < fitted) {
            g = r.slice(g, a, 0, given);
        } else if (given > fitted) {
            std::vector<int64_t> pad = r.shape(g);
            pad[static_cast<size_t>(a)] = given - fitted;
            g = r.concat(g, r.zeros(pad, r.signature(g).dtype, r.engine(g)), a);
        }
    }
    return g;
}

// The norm that gives the adjoint transform `adjoint_inverse` (scaled as an inverse under
// "backward" or not) the scale of the transform t itself.
Norm adjoint_norm(const Transform& t, bool adjoint_inverse) { return adjoint_inverse == t.inverse ? t.norm : dual(t.norm); }

// 1 at frequency 0, 2 at 1 .. n - (n/2 + 1), 1 above: the multiplicity of each retained
// frequency of a half spectrum of length m = n/2 + 1 in the full one (shape: m on `axis`).
TensorRef mirror_weights(const Ops& r, Arg like, const Transform& t) {
    const int64_t axis = t.axes.back(), n = t.lengths.back(), m = n / 2 + 1;
    std::vector<double> w(static_cast<size_t>(m), 1.0);
    for (int64_t i = 1; i <= n - m; ++i) w[static_cast<size_t>(i)] = 2.0;
    std::vector<float> wf(w.begin(), w.end());
    std::vector<int64_t> shape(t.out_shape.size(), 1);
    shape[static_cast<size_t>(axis)] = m;
    const ferro_dtype real = plugin::real_dtype(r.signature(like).dtype);
    ferro_tensor out = nullptr;
    plugin::check(r.host(),
                  r.host()->tensor_from_host(r.host(), r.engine(like), real, static_cast<int32_t>(shape.size()), shape.data(),
                                             real == FERRO_DTYPE_F32 ? static_cast<const void*>(wf.data()) : w.data(), &out));
    return TensorRef(r.host(), out);
}

}  // namespace

std::span<const char* const> rule_calls() {
    static const auto names = [] {
        std::array<std::string, static_cast<size_t>(Op::count)> qualified_names;
        for (size_t i = 0; i < qualified_names.size(); ++i) qualified_names[i] = qualified(static_cast<Op>(i));
        return qualified_names;
    }();
    static const auto pointers = [] {
        std::array<const char*, static_cast<size_t>(Op::count)> p{};
        for (size_t i = 0; i < p.size(); ++i) p[i] = names[i].c_str();
        return p;
    }();
    return pointers;
}

ferro_status vjp(Op op, const ferro_host_api* host, const ferro_vjp_args* args) {
    return plugin::guard(host, [&] {
        const ferro_vjp_args& a = *args;
        if (!a.needs_input_grad[0] || a.cotangents[0] == nullptr) return;
        const Transform t = describe(op, a.attrs, a.input_sigs[0]);
        const Ops r(host, *args);
        const ferro_attr_value& planner = a.attrs[3];
        TensorRef g;
        switch (t.kind) {
            case Kind::c2c:
                g = r.transform(t.inverse ? Op::fftn : Op::ifftn, a.cotangents[0], t.lengths, t.axes, adjoint_norm(t, !t.inverse),
                                planner);
                break;
            case Kind::r2c: {
                // ifftn pads the half spectrum with zeros up to the full lengths itself.
                const TensorRef half = t.conj_out ? r.conj(a.cotangents[0]) : r.borrow(a.cotangents[0]);
                g = r.real(r.transform(Op::ifftn, half, t.lengths, t.axes, adjoint_norm(t, true), planner));
                break;
            }
            case Kind::c2r: {
                const TensorRef spectrum =
                    r.transform(Op::rfftn, a.cotangents[0], t.lengths, t.axes, adjoint_norm(t, false), planner);
                g = r.mul(spectrum, mirror_weights(r, spectrum, t));
                if (t.conj_in) g = r.conj(g);
                break;
            }
        }
        a.input_cotangents[0] = unfit(r, std::move(g), t).release();
    });
}

ferro_status jvp(Op op, const ferro_host_api* host, const ferro_jvp_args* args) {
    return plugin::guard(host, [&] {
        const ferro_jvp_args& a = *args;
        if (a.input_tangents[0] == nullptr) return;
        const Ops r(host, *args);
        const ferro_op_schema& s = schemas()[static_cast<uint32_t>(op)];
        std::vector<ferro_named_attr> attrs(s.n_attrs);
        for (uint32_t i = 0; i < s.n_attrs; ++i) attrs[i] = {s.attrs[i].name, a.attrs[i]};
        a.output_tangents[0] = r.call(rule_op(op), std::span<const ferro_tensor>(&a.input_tangents[0], 1), attrs).release();
    });
}

}  // namespace ferro::fft
