/* Preloaded into the ASan test runs (CMakePresets.json, asan test preset): keeps Vulkan driver
 * libraries (libvulkan_*.so, the ICDs the Vulkan loader opens) loaded when the loader closes
 * them, so that LeakSanitizer can still see their globals at exit.
 *
 * Why: Mesa 22.3's CPU detection, which lavapipe runs when it loads, records the L3 caches of
 * an AMD Zen CPU in a realloc'd array that only a global points to and nothing frees. Once the
 * loader has unloaded the driver, that global is gone and LSan reports the array as a leak (two
 * of 128 bytes per process, "<unknown module>", which no suppression can name). Keeping the
 * driver resident leaves the array reachable; leaks in ferro's own libraries, and VkInstances
 * ferro fails to destroy (the loader itself still unloads), are reported as before. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

int dlclose(void* handle) {
    struct link_map* map = NULL;
    if (handle != NULL && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL && map->l_name != NULL &&
        strstr(map->l_name, "/libvulkan_") != NULL) {
        return 0;
    }
    int (*real_dlclose)(void*) = (int (*)(void*))dlsym(RTLD_NEXT, "dlclose");
    return real_dlclose(handle);
}
