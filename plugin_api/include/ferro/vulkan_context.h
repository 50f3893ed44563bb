/* ferro plugin ABI — the native context of the vulkan engine ("ferro.vulkan.ctx.v1").
 *
 * A context executor prepared for a vulkan engine receives a `const ferro_vulkan_context*` as
 * its native context, borrowed for the executor call. The executor records its work into
 * `command_buffer` (the session's, in the recording state); the engine submits it with the
 * session, after a barrier that makes earlier kernels' writes visible, and puts the same
 * barrier after it. Executors must not submit, end or reset that command buffer.
 *
 * A session executor gets the same context from host->session_native_context (ABI 1.5), between
 * the primitives it enqueues. command_pool and command_buffer belong to the call; the other
 * fields (instance, devices, queue, the three functions, engine) stay valid while the engine
 * exists, so a plan may keep a copy of them (for instance to wait for the queue before it
 * destroys pipelines of its own).
 *
 * Vulkan handles are given as plain pointers (dispatchable: VkInstance, VkPhysicalDevice,
 * VkDevice, VkQueue, VkCommandBuffer) and uint64_t (non-dispatchable: VkCommandPool,
 * VkBuffer), so this header does not need vulkan.h. Cast them to the Vulkan types.
 *
 * Since: 1.4. */
#ifndef FERRO_VULKAN_CONTEXT_H
#define FERRO_VULKAN_CONTEXT_H

#include "ferro/abi.h"
#include "ferro/status.h"
#include "ferro/types.h"

FERRO_EXTERN_C_BEGIN

#define FERRO_VULKAN_CONTEXT_ABI "ferro.vulkan.ctx.v1"

/* Where a ferro_buffer of this engine lives: its VkBuffer, the byte offset of the ferro_buffer's
 * first byte in it, and that byte's device address (bufferDeviceAddress is always enabled). */
typedef struct ferro_vulkan_buffer_info {
    uint64_t buffer; /* VkBuffer */
    uint64_t offset;
    uint64_t device_address;
    uint64_t size; /* bytes the ferro_buffer holds */
} ferro_vulkan_buffer_info;

typedef struct ferro_vulkan_context {
    uint32_t struct_size;
    uint32_t api_version;  /* the device's VK_MAKE_API_VERSION */
    void* instance;        /* VkInstance */
    void* physical_device; /* VkPhysicalDevice */
    void* device;          /* VkDevice; created with bufferDeviceAddress and shaderInt64 enabled,
                              shaderFloat64 and storageBuffer8BitAccess when the device has them */
    void* queue;           /* VkQueue the engine submits to; submit only inside lock_queue */
    uint32_t queue_family_index;
    uint32_t reserved;
    uint64_t command_pool; /* VkCommandPool of the session's command buffer (transient) */
    void* command_buffer;  /* VkCommandBuffer of the session, recording */
    /* PFN_vkGetInstanceProcAddr of the loader the engine uses (the plugin does not link
     * libvulkan; neither need executors). */
    void (*(*get_instance_proc_addr)(void* instance, const char* name))(void);
    /* Where `buffer` (any buffer of this engine, e.g. a tensor view's) lives. Thread-safe. */
    ferro_status (*buffer_info)(const struct ferro_vulkan_context* ctx, ferro_buffer buffer, ferro_vulkan_buffer_info* out);
    /* Take (lock != 0) or release the engine's queue lock, for executors that must submit work
     * of their own (a library that only records needs neither). */
    void (*lock_queue)(const struct ferro_vulkan_context* ctx, int32_t lock);
    void* engine; /* engine-private; do not touch */
} ferro_vulkan_context;
FERRO_STRUCT_TRAITS(ferro_vulkan_context, engine);

FERRO_EXTERN_C_END

#endif /* FERRO_VULKAN_CONTEXT_H */
