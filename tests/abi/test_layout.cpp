// Pins the size and key offsets of every struct that crosses the plugin boundary (x86_64 LP64).
// A failure here means a layout changed: that is an ABI major bump (abi.h rule 1), or a
// mistake. Appending a field changes only the size: update the pin and add a CHANGELOG line.
#include <ferro/cpu_context.h>
#include <ferro/cuda_context.h>
#include <ferro/plugin.h>
#include <ferro/vulkan_context.h>

#include <catch2/catch.hpp>

#include <cstddef>

#define PIN_SIZE(type, n) CHECK(sizeof(type) == (n))
#define PIN_OFFSET(type, field, n) CHECK(offsetof(type, field) == (n))

TEST_CASE("abi: struct sizes and offsets of ABI 1.x are pinned", "[abi]") {
    PIN_SIZE(ferro_scalar, 24);
    PIN_SIZE(ferro_attr_value, 16);
    PIN_SIZE(ferro_named_attr, 24);
    PIN_SIZE(ferro_signature, 1040);
    PIN_OFFSET(ferro_signature, shape, 16);
    PIN_OFFSET(ferro_signature, strides, 528);
    PIN_SIZE(ferro_tensor_view, 64);
    PIN_OFFSET(ferro_tensor_view, shape, 16);
    PIN_OFFSET(ferro_tensor_view, buffer, 32);
    PIN_OFFSET(ferro_tensor_view, data, 48);
    PIN_OFFSET(ferro_tensor_view, tensor, 56);
    PIN_SIZE(ferro_buffer_view, 40);
    PIN_SIZE(ferro_fill_args, 96);
    PIN_SIZE(ferro_binary_args, 200);
    PIN_SIZE(ferro_where_args, 264);
    PIN_SIZE(ferro_gemm_operand, 48);
    PIN_SIZE(ferro_gemm_args, 240);
    PIN_OFFSET(ferro_gemm_args, alpha, 184);
    PIN_OFFSET(ferro_gemm_args, conj_a, 232);
    PIN_SIZE(ferro_device_props, 504);
    PIN_OFFSET(ferro_device_props, memory_bytes, 136);
    PIN_OFFSET(ferro_device_props, dtypes, 172);
    PIN_OFFSET(ferro_device_props, threads, 496);  // 1.10 appended reserved (the padding before), threads
    PIN_SIZE(ferro_probe_result, 264);
    PIN_SIZE(ferro_engine_iface, 200);  // 1.13 appended elementwise_fused; 1.14 the four recording entries
    PIN_OFFSET(ferro_engine_iface, elementwise_fused, 160);
    PIN_OFFSET(ferro_engine_iface, session_begin_recording, 168);
    PIN_OFFSET(ferro_engine_iface, recording_destroy, 192);
    PIN_SIZE(ferro_fused_instr, 12);
    PIN_SIZE(ferro_fused_args, 48);
    PIN_OFFSET(ferro_engine_iface, import_memory, 144);
    PIN_OFFSET(ferro_engine_iface, fill, 64);
    PIN_OFFSET(ferro_engine_iface, gemm_batched, 120);
    PIN_OFFSET(ferro_engine_iface, destroy, 136);
    PIN_SIZE(ferro_engine_instance, 24);
    PIN_SIZE(ferro_engine_desc, 48);
    PIN_OFFSET(ferro_engine_desc, probe, 32);
    PIN_OFFSET(ferro_engine_desc, create, 40);
    PIN_SIZE(ferro_attr_spec, 48);
    PIN_OFFSET(ferro_attr_spec, default_value, 24);
    PIN_SIZE(ferro_infer_args, 48);  // 1.9 appended schema
    PIN_OFFSET(ferro_infer_args, schema, 40);
    PIN_SIZE(ferro_vjp_args, 120);  // 1.8 appended n_residuals, residuals; 1.9 schema; 1.12 the op handles
    PIN_OFFSET(ferro_vjp_args, residuals, 80);
    PIN_OFFSET(ferro_vjp_args, schema, 88);
    PIN_OFFSET(ferro_vjp_args, input_cotangents, 64);
    PIN_OFFSET(ferro_vjp_args, n_core_ops, 96);
    PIN_OFFSET(ferro_vjp_args, n_family_ops, 100);
    PIN_OFFSET(ferro_vjp_args, core_ops, 104);
    PIN_OFFSET(ferro_vjp_args, family_ops, 112);
    PIN_SIZE(ferro_jvp_args, 88);  // 1.9 appended schema; 1.12 the op handles
    PIN_OFFSET(ferro_jvp_args, schema, 56);
    PIN_OFFSET(ferro_jvp_args, n_core_ops, 64);
    PIN_OFFSET(ferro_jvp_args, core_ops, 72);
    PIN_OFFSET(ferro_jvp_args, family_ops, 80);
    PIN_SIZE(ferro_op_schema, 120);
    PIN_OFFSET(ferro_op_schema, infer, 64);
    PIN_OFFSET(ferro_op_schema, diff_inputs, 72);
    PIN_OFFSET(ferro_op_schema, vjp, 104);
    PIN_OFFSET(ferro_op_schema, jvp, 112);
    PIN_SIZE(ferro_exec_args, 104);  // 1.10 appended n_residuals, residuals
    PIN_OFFSET(ferro_exec_args, n_residuals, 88);
    PIN_OFFSET(ferro_exec_args, residuals, 96);
    PIN_OFFSET(ferro_exec_args, workspace, 40);
    PIN_OFFSET(ferro_exec_args, session, 80);
    PIN_SIZE(ferro_plan_iface, 32);
    PIN_SIZE(ferro_plan_instance, 56);  // 1.8 appended n_residuals, residuals
    PIN_OFFSET(ferro_plan_instance, n_residuals, 40);
    PIN_OFFSET(ferro_plan_instance, residuals, 48);
    PIN_SIZE(ferro_prepare_args, 72);  // 1.1 appended output_strides, 1.8 recorded_inputs
    PIN_OFFSET(ferro_prepare_args, output_strides, 56);
    PIN_OFFSET(ferro_prepare_args, recorded_inputs, 64);
    PIN_SIZE(ferro_module_iface, 40);  // 1.8 appended flags
    PIN_OFFSET(ferro_module_iface, flags, 32);
    PIN_OFFSET(ferro_module_iface, examples, 24);
    PIN_SIZE(ferro_examples_args, 40);
    PIN_SIZE(ferro_example, 304);
    PIN_OFFSET(ferro_example, input_flags, 72);
    PIN_OFFSET(ferro_example, attrs, 104);
    PIN_OFFSET(ferro_examples_args, examples, 24);
    PIN_OFFSET(ferro_examples_args, n_examples, 32);
    PIN_SIZE(ferro_module_instance, 24);
    PIN_SIZE(ferro_engine_target, 48);  // 1.10 appended threads
    PIN_OFFSET(ferro_engine_target, threads, 40);
    PIN_SIZE(ferro_module_create_args, 32);  // 1.9 appended family
    PIN_OFFSET(ferro_module_create_args, family, 24);
    PIN_SIZE(ferro_family_desc, 48);
    PIN_OFFSET(ferro_family_desc, create_module, 40);
    PIN_SIZE(ferro_module_provider_desc, 32);
    PIN_SIZE(ferro_op_call_args, 64);  // 1.7 appended into, n_into
    PIN_OFFSET(ferro_op_call_args, reserved, 44);
    PIN_OFFSET(ferro_op_call_args, into, 48);
    PIN_OFFSET(ferro_op_call_args, n_into, 56);
    PIN_SIZE(ferro_host_api, 264);  // 1.5 session_native_context, session_use; 1.16 runtime_communicator; 1.17 session_parallel
    PIN_OFFSET(ferro_host_api, status_make, 24);
    PIN_OFFSET(ferro_host_api, log, 56);
    PIN_OFFSET(ferro_host_api, tensor_retain, 72);
    PIN_OFFSET(ferro_host_api, op_find, 136);
    PIN_OFFSET(ferro_host_api, session_fill, 160);
    PIN_OFFSET(ferro_host_api, session_scratch, 224);
    PIN_OFFSET(ferro_host_api, session_native_context, 232);
    PIN_OFFSET(ferro_host_api, session_use, 240);
    PIN_OFFSET(ferro_host_api, runtime_communicator, 248);
    PIN_OFFSET(ferro_host_api, session_parallel, 256);
    PIN_SIZE(ferro_communicator, 32);  // 1.16
    PIN_OFFSET(ferro_communicator, kind, 8);
    PIN_OFFSET(ferro_communicator, handle, 16);
    PIN_OFFSET(ferro_communicator, bytes, 24);
    PIN_SIZE(ferro_plugin_desc, 88);  // 1.11 appended extensions
    PIN_OFFSET(ferro_plugin_desc, extensions, 80);
    PIN_SIZE(ferro_extension, 16);
    PIN_OFFSET(ferro_extension, type, 4);
    PIN_OFFSET(ferro_extension, next, 8);
    PIN_SIZE(ferro_op_view, 16);
    PIN_OFFSET(ferro_op_view, flags, 12);
    PIN_SIZE(ferro_op_views_ext, 40);
    PIN_OFFSET(ferro_op_views_ext, family_id, 16);
    PIN_OFFSET(ferro_op_views_ext, n_views, 24);
    PIN_OFFSET(ferro_op_views_ext, views, 32);
    PIN_SIZE(ferro_rule_calls_ext, 40);  // 1.12
    PIN_OFFSET(ferro_rule_calls_ext, family_id, 16);
    PIN_OFFSET(ferro_rule_calls_ext, n_ops, 24);
    PIN_OFFSET(ferro_rule_calls_ext, ops, 32);
    PIN_OFFSET(ferro_plugin_desc, abi_major, 4);
    PIN_OFFSET(ferro_plugin_desc, abi_minor, 8);
    PIN_OFFSET(ferro_plugin_desc, name, 16);
    PIN_OFFSET(ferro_plugin_desc, engines, 48);
    PIN_OFFSET(ferro_plugin_desc, module_providers, 72);
    PIN_SIZE(ferro_cpu_context, 48);  // 1.2 appended blas_one_thread; 1.18 blas_name, blas_version
    PIN_OFFSET(ferro_cpu_context, blas_one_thread, 24);
    PIN_OFFSET(ferro_cpu_context, blas_name, 32);
    PIN_OFFSET(ferro_cpu_context, blas_version, 40);
    PIN_OFFSET(ferro_cpu_context, parallel_for, 8);
    PIN_SIZE(ferro_vulkan_context, 96);  // 1.4
    PIN_OFFSET(ferro_vulkan_context, device, 24);
    PIN_OFFSET(ferro_vulkan_context, queue_family_index, 40);
    PIN_OFFSET(ferro_vulkan_context, command_buffer, 56);
    PIN_OFFSET(ferro_vulkan_context, buffer_info, 72);
    PIN_OFFSET(ferro_vulkan_context, engine, 88);
    PIN_SIZE(ferro_vulkan_buffer_info, 32);
    PIN_SIZE(ferro_cuda_context, 64);  // 1.6
    PIN_OFFSET(ferro_cuda_context, device, 4);
    PIN_OFFSET(ferro_cuda_context, stream, 8);
    PIN_OFFSET(ferro_cuda_context, cusolver, 24);
    PIN_OFFSET(ferro_cuda_context, synchronize, 48);
    PIN_OFFSET(ferro_cuda_context, engine, 56);
}

TEST_CASE("abi: every boundary struct starts with struct_size", "[abi]") {
    CHECK(offsetof(ferro_signature, struct_size) == 0);
    CHECK(offsetof(ferro_tensor_view, struct_size) == 0);
    CHECK(offsetof(ferro_gemm_args, struct_size) == 0);
    CHECK(offsetof(ferro_device_props, struct_size) == 0);
    CHECK(offsetof(ferro_engine_iface, struct_size) == 0);
    CHECK(offsetof(ferro_engine_desc, struct_size) == 0);
    CHECK(offsetof(ferro_op_schema, struct_size) == 0);
    CHECK(offsetof(ferro_plan_instance, struct_size) == 0);
    CHECK(offsetof(ferro_host_api, struct_size) == 0);
    CHECK(offsetof(ferro_plugin_desc, struct_size) == 0);
    CHECK(offsetof(ferro_extension, struct_size) == 0);
    CHECK(offsetof(ferro_op_views_ext, base) == 0);
    CHECK(offsetof(ferro_rule_calls_ext, base) == 0);
    CHECK(offsetof(ferro_cpu_context, struct_size) == 0);
    CHECK(offsetof(ferro_vulkan_context, struct_size) == 0);
    CHECK(offsetof(ferro_cuda_context, struct_size) == 0);
}

TEST_CASE("abi: dtypes are packed DLPack DLDataType values", "[abi]") {
    // DLDataType{code, bits, lanes} little-endian: kDLFloat = 2, kDLComplex = 5, kDLBool = 6.
    CHECK(FERRO_DTYPE_F32 == 0x00012002u);
    CHECK(FERRO_DTYPE_F64 == 0x00014002u);
    CHECK(FERRO_DTYPE_C64 == 0x00014005u);
    CHECK(FERRO_DTYPE_C128 == 0x00018005u);
    CHECK(FERRO_DTYPE_I64 == 0x00014000u);
    CHECK(FERRO_DTYPE_BOOL == 0x00010806u);
    CHECK(FERRO_DTYPE_BITS(FERRO_DTYPE_C128) == 128u);
    CHECK(FERRO_DTYPE_CODE(FERRO_DTYPE_C64) == FERRO_DLPACK_COMPLEX);
    CHECK(FERRO_DTYPE_LANES(FERRO_DTYPE_F32) == 1u);
}

TEST_CASE("abi: FERRO_HAS_FIELD tells fields a shorter struct lacks", "[abi]") {
    ferro_host_api api{};
    api.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_host_api, log_enabled);
    CHECK(FERRO_HAS_FIELD(&api, ferro_host_api, status_make));
    CHECK(FERRO_HAS_FIELD(&api, ferro_host_api, log_enabled));
    CHECK_FALSE(FERRO_HAS_FIELD(&api, ferro_host_api, tensor_retain));
    api.struct_size = sizeof(ferro_host_api);
    CHECK(FERRO_HAS_FIELD(&api, ferro_host_api, session_scratch));
    CHECK(FERRO_HAS_FIELD(&api, ferro_host_api, session_use));
    api.struct_size = FERRO_STRUCT_SIZE_UP_TO(ferro_host_api, session_scratch);  // a 1.4 host
    CHECK_FALSE(FERRO_HAS_FIELD(&api, ferro_host_api, session_native_context));
}

TEST_CASE("abi: variadic masks map inputs past 62 to bit 63", "[abi]") {
    CHECK(FERRO_MASK_BIT(0) == 1u);
    CHECK(FERRO_MASK_BIT(62) == (uint64_t{1} << 62));
    CHECK(FERRO_MASK_BIT(63) == (uint64_t{1} << 63));
    CHECK(FERRO_MASK_BIT(400) == (uint64_t{1} << 63));
}
