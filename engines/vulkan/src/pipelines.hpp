// Compute pipelines from the SPIR-V compiled by glslc at build time (shaders/, embedded by
// CMake in shader_table.cpp), one per (shader, op) with the op as specialisation constant 0,
// made on first use and kept. Every pipeline shares one layout: no descriptor sets, one push
// constant, the device address of the dispatch's argument block.
#pragma once

#include "vk_api.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace ferro::vk {

struct EmbeddedShader {
    const char* name;  // "unary_f32"
    const uint32_t* code;
    size_t bytes;
};
extern const EmbeddedShader kShaders[];
extern const size_t kShaderCount;

// Invocations per workgroup of the elementwise and reduction shaders (local_size_x).
constexpr uint32_t kGroupSize = 256;

class Pipelines {
public:
    Pipelines(VkDevice device, const DeviceFunctions& fns);
    Pipelines(const Pipelines&) = delete;
    Pipelines& operator=(const Pipelines&) = delete;
    ~Pipelines();

    // Null with `why` when there is no such shader or the driver refuses it.
    VkPipeline get(const std::string& shader, uint32_t op, std::string& why);
    VkPipelineLayout layout() const noexcept { return layout_; }
    size_t size() const;

private:
    VkDevice device_;
    const DeviceFunctions& fns_;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    mutable std::mutex mutex_;
    std::map<std::string, VkShaderModule> modules_;
    std::map<std::pair<std::string, uint32_t>, VkPipeline> pipelines_;
};

}  // namespace ferro::vk
