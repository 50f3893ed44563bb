// Shared by the fft modules of device engines (VkFFT, cuFFT): the steps before and after the
// vendor library's transform, run as the engine's own primitives in the call's session.
#pragma once

#include "fft.hpp"

#include <ferro/plugin.hpp>

#include <vector>

namespace ferro::fft {

// The part of `in` the transform reads (its first `read_shape` elements along each axis) into
// `dst`: conjugated for hfft, converted where the dtypes differ (real input of a complex
// transform), copied otherwise. `read_shape` is borrowed by the view: it outlives the call.
inline void gather_input(const ferro_host_api* host, ferro_session session, const Transform& t, ferro_tensor_view in,
                         const std::vector<int64_t>& read_shape, const ferro_tensor_view& dst) {
    in.shape = read_shape.data();
    if (t.conj_in && plugin::is_complex(in.dtype)) {
        ferro_unary_args conj{sizeof conj, FERRO_UNARY_CONJ, in, dst};
        plugin::check(host, host->session_unary(session, &conj));
    } else if (in.dtype != dst.dtype) {
        ferro_cast_args cast{sizeof cast, 0, in, dst};
        plugin::check(host, host->session_cast(session, &cast));
    } else {
        ferro_copy_args copy{sizeof copy, 0, in, dst};
        plugin::check(host, host->session_copy_strided(session, &copy));
    }
}

// The transform's result into `out`, times `scale` (a view of one element broadcast to out's
// shape) when the norm scales, then conjugated in place for ihfft.
inline void scatter_output(const ferro_host_api* host, ferro_session session, const Transform& t, const ferro_tensor_view& result,
                           const ferro_tensor_view* scale, const ferro_tensor_view& out) {
    if (scale != nullptr) {
        ferro_binary_args mul{sizeof mul, FERRO_BINARY_MUL, result, *scale, out};
        plugin::check(host, host->session_binary(session, &mul));
    } else {
        ferro_copy_args copy{sizeof copy, 0, result, out};
        plugin::check(host, host->session_copy_strided(session, &copy));
    }
    if (t.conj_out) {
        ferro_unary_args conj{sizeof conj, FERRO_UNARY_CONJ, out, out};
        plugin::check(host, host->session_unary(session, &conj));
    }
}

}  // namespace ferro::fft
