/* A tool that registers itself with rocprofiler_force_configure from its constructor (run when
 * the library is preloaded, before the application's main) and defines no rocprofiler_configure,
 * so the SDK can find it only as a forced configure. Its configure prints the priority the SDK
 * gives it and declines (returns NULL). The SDK function is looked up at run time so the library
 * links without the SDK. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    size_t size;
    const char* name;
    uint32_t handle;
} client_id_t;

typedef void* (*configure_fn)(uint32_t, const char*, uint32_t, client_id_t*);
typedef int (*force_fn)(configure_fn);

static void* forced(uint32_t version, const char* runtime, uint32_t priority, client_id_t* id) {
    (void)version;
    (void)runtime;
    (void)id;
    printf("[forced-configure] priority=%u\n", priority);
    fflush(stdout);
    return NULL;
}

__attribute__((constructor)) static void register_forced(void) {
    force_fn force = (force_fn)dlsym(RTLD_DEFAULT, "rocprofiler_force_configure");
    if (force == NULL) {
        printf("[forced-configure] no rocprofiler_force_configure\n");
        return;
    }
    printf("[forced-configure] status=%d\n", force(forced));
    fflush(stdout);
}
