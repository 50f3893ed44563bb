#include "memory.hpp"

#include <algorithm>

namespace ferro::vk {
namespace {

// Every range starts at a multiple of this: enough for any element type and for the
// minimum storage-buffer offset alignment of every known device.
constexpr uint64_t kMinAlignment = 256;

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

Memory::Memory(VkDevice device, const DeviceFunctions& fns, uint32_t type_index, bool map, uint64_t block_size,
               uint64_t max_allocation)
    : device_(device), fns_(fns), type_index_(type_index), map_(map), block_size_(block_size), max_allocation_(max_allocation) {}

Memory::~Memory() {
    for (auto& b : blocks_) destroy_block(b.get());
}

uint64_t Memory::bytes_in_blocks() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    uint64_t total = 0;
    for (const auto& b : blocks_) total += b->size;
    return total;
}

Block* Memory::new_block(uint64_t size, bool dedicated, std::string& why, bool& exhausted) {
    auto b = std::make_unique<Block>();
    b->size = size;
    b->dedicated = dedicated;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = fns_.vkCreateBuffer(device_, &info, nullptr, &b->buffer);
    if (r != VK_SUCCESS) {
        why = "vkCreateBuffer of " + std::to_string(size) + " bytes failed: " + result_name(r);
        exhausted = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY;
        return nullptr;
    }
    VkMemoryRequirements req{};
    fns_.vkGetBufferMemoryRequirements(device_, b->buffer, &req);
    if ((req.memoryTypeBits & (1u << type_index_)) == 0) {
        fns_.vkDestroyBuffer(device_, b->buffer, nullptr);
        why = "the device cannot place a storage buffer in memory type " + std::to_string(type_index_);
        return nullptr;
    }
    VkMemoryAllocateFlagsInfo flags{};
    flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &flags;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type_index_;
    r = fns_.vkAllocateMemory(device_, &alloc, nullptr, &b->memory);
    if (r != VK_SUCCESS) {
        fns_.vkDestroyBuffer(device_, b->buffer, nullptr);
        why = "vkAllocateMemory of " + std::to_string(req.size) + " bytes failed: " + result_name(r);
        exhausted = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY;
        return nullptr;
    }
    r = fns_.vkBindBufferMemory(device_, b->buffer, b->memory, 0);
    void* mapped = nullptr;
    if (r == VK_SUCCESS && map_) r = fns_.vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (r != VK_SUCCESS) {
        fns_.vkDestroyBuffer(device_, b->buffer, nullptr);
        fns_.vkFreeMemory(device_, b->memory, nullptr);
        why = "binding or mapping a block failed: " + result_name(r);
        return nullptr;
    }
    b->mapped = static_cast<char*>(mapped);
    VkBufferDeviceAddressInfo address{};
    address.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
    address.buffer = b->buffer;
    b->address = fns_.vkGetBufferDeviceAddress(device_, &address);
    b->free_ranges.emplace(0, size);
    blocks_.push_back(std::move(b));
    return blocks_.back().get();
}

void Memory::destroy_block(Block* b) {
    if (b->mapped != nullptr) fns_.vkUnmapMemory(device_, b->memory);
    fns_.vkDestroyBuffer(device_, b->buffer, nullptr);
    fns_.vkFreeMemory(device_, b->memory, nullptr);
}

Allocation* Memory::allocate(uint64_t bytes, uint64_t alignment, std::string& why, bool& exhausted) {
    const uint64_t align = std::max(alignment, kMinAlignment);
    if (bytes == 0 || bytes > max_allocation_ || align > kMinAlignment * 16) {
        why = bytes > max_allocation_
                  ? "the device allows at most " + std::to_string(max_allocation_) + " bytes in one allocation"
                  : "unsupported size or alignment";
        exhausted = bytes > max_allocation_;
        return nullptr;
    }
    const uint64_t size = round_up(bytes, kMinAlignment);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (size > block_size_ / 2) {
        Block* b = new_block(size, true, why, exhausted);
        if (b == nullptr) return nullptr;
        b->free_ranges.clear();
        return new Allocation{b, 0, size};
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (auto& b : blocks_) {
            if (b->dedicated) continue;
            for (auto it = b->free_ranges.begin(); it != b->free_ranges.end(); ++it) {
                const uint64_t start = round_up(it->first, align), end = it->first + it->second;
                if (start + size > end) continue;
                const uint64_t range_start = it->first;
                b->free_ranges.erase(it);
                if (start > range_start) b->free_ranges.emplace(range_start, start - range_start);
                if (end > start + size) b->free_ranges.emplace(start + size, end - start - size);
                return new Allocation{b.get(), start, size};
            }
        }
        if (attempt == 0 && new_block(block_size_, false, why, exhausted) == nullptr) return nullptr;
    }
    why = "internal: a new block could not hold the request";
    return nullptr;
}

void Memory::release(Allocation* a) {
    if (a == nullptr) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    Block* b = a->block;
    const auto drop = [&] {
        destroy_block(b);
        blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(), [&](const auto& p) { return p.get() == b; }));
    };
    if (b->dedicated) {
        drop();
        delete a;
        return;
    }
    // Return the range and merge it with free neighbours.
    auto [it, inserted] = b->free_ranges.emplace(a->offset, a->size);
    delete a;
    if (!inserted) return;  // cannot happen: ranges are handed out once
    if (auto next = std::next(it); next != b->free_ranges.end() && it->first + it->second == next->first) {
        it->second += next->second;
        b->free_ranges.erase(next);
    }
    if (it != b->free_ranges.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            b->free_ranges.erase(it);
            it = prev;
        }
    }
    // An empty block goes back to the device unless it is the only general block left.
    if (it->first == 0 && it->second == b->size) {
        const auto general = std::count_if(blocks_.begin(), blocks_.end(), [](const auto& p) { return !p->dedicated; });
        if (general > 1) drop();
    }
}

}  // namespace ferro::vk
