// Engine memory: large VkDeviceMemory blocks, each bound whole to one VkBuffer (usable as
// storage, transfer source/destination and by device address), cut into ranges first-fit.
// A ferro_buffer is an Allocation*. Requests above half a block get a block of their own.
#pragma once

#include "vk_api.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferro::vk {

struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceAddress address = 0;
    uint64_t size = 0;
    char* mapped = nullptr;  // host address of byte 0 when the memory is host visible
    bool dedicated = false;
    std::map<uint64_t, uint64_t> free_ranges;  // offset -> bytes
};

struct Allocation {
    Block* block;
    uint64_t offset;  // in the block
    uint64_t size;
    VkDeviceAddress address() const { return block->address + offset; }
    char* mapped() const { return block->mapped != nullptr ? block->mapped + offset : nullptr; }
};

class Memory {
public:
    // `type_index`: the memory type blocks come from; `map`: keep them mapped (the type must
    // be host visible and coherent).
    Memory(VkDevice device, const DeviceFunctions& fns, uint32_t type_index, bool map, uint64_t block_size,
           uint64_t max_allocation);
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    ~Memory();

    // Null with `why` (and `exhausted` set when the device is out of memory or the request
    // exceeds what one allocation may hold).
    Allocation* allocate(uint64_t bytes, uint64_t alignment, std::string& why, bool& exhausted);
    void release(Allocation* a);

    bool mapped() const noexcept { return map_; }
    uint64_t bytes_in_blocks() const;

private:
    Block* new_block(uint64_t size, bool dedicated, std::string& why, bool& exhausted);
    void destroy_block(Block* b);

    VkDevice device_;
    const DeviceFunctions& fns_;
    uint32_t type_index_;
    bool map_;
    uint64_t block_size_;
    uint64_t max_allocation_;
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace ferro::vk
