#include "pipelines.hpp"

#include <cstring>

namespace ferro::vk {

Pipelines::Pipelines(VkDevice device, const DeviceFunctions& fns) : device_(device), fns_(fns) {
    VkPushConstantRange range{};
    range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    range.size = sizeof(uint64_t);
    VkPipelineLayoutCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &range;
    if (fns_.vkCreatePipelineLayout(device_, &info, nullptr, &layout_) != VK_SUCCESS) layout_ = VK_NULL_HANDLE;
}

Pipelines::~Pipelines() {
    for (auto& [key, p] : pipelines_) fns_.vkDestroyPipeline(device_, p, nullptr);
    for (auto& [name, m] : modules_) fns_.vkDestroyShaderModule(device_, m, nullptr);
    if (layout_ != VK_NULL_HANDLE) fns_.vkDestroyPipelineLayout(device_, layout_, nullptr);
}

size_t Pipelines::size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return pipelines_.size();
}

VkPipeline Pipelines::get(const std::string& shader, uint32_t op, std::string& why) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pipelines_.find({shader, op}); it != pipelines_.end()) return it->second;
    if (layout_ == VK_NULL_HANDLE) {
        why = "the pipeline layout could not be created";
        return VK_NULL_HANDLE;
    }
    auto module = modules_.find(shader);
    if (module == modules_.end()) {
        const EmbeddedShader* found = nullptr;
        for (size_t i = 0; i < kShaderCount; ++i) {
            if (shader == kShaders[i].name) found = &kShaders[i];
        }
        if (found == nullptr) {
            why = "no shader " + shader;
            return VK_NULL_HANDLE;
        }
        VkShaderModuleCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        info.codeSize = found->bytes;
        info.pCode = found->code;
        VkShaderModule m = VK_NULL_HANDLE;
        const VkResult r = fns_.vkCreateShaderModule(device_, &info, nullptr, &m);
        if (r != VK_SUCCESS) {
            why = "vkCreateShaderModule(" + shader + ") failed: " + result_name(r);
            return VK_NULL_HANDLE;
        }
        module = modules_.emplace(shader, m).first;
    }
    VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
    VkSpecializationInfo spec{1, &entry, sizeof op, &op};
    VkComputePipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module->second;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &spec;
    info.layout = layout_;
    VkPipeline p = VK_NULL_HANDLE;
    const VkResult r = fns_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p);
    if (r != VK_SUCCESS) {
        why = "vkCreateComputePipelines(" + shader + ", op " + std::to_string(op) + ") failed: " + result_name(r);
        return VK_NULL_HANDLE;
    }
    pipelines_.emplace(std::make_pair(shader, op), p);
    return p;
}

}  // namespace ferro::vk
