/* Resolves, from inside the running emulated SDK, every function the SDK's public headers
 * declare: the names-only list named by KRP_DECLARED_LIST (one name a line, '#' comments), each
 * looked up with dlsym in the global scope, as a tool that links against the SDK or resolves it
 * at run time would. Prints every name that does not resolve and aborts if any; otherwise prints
 * how many resolved. Declines to be a client (returns NULL), so nothing else runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void* rocprofiler_configure(uint32_t version, const char* runtime, uint32_t priority, void* id) {
    (void) version;
    (void) runtime;
    (void) priority;
    (void) id;
    const char* path = getenv("KRP_DECLARED_LIST");
    if(!path) {
        fprintf(stderr, "[exports-probe] KRP_DECLARED_LIST is not set\n");
        abort();
    }
    FILE* f = fopen(path, "r");
    if(!f) {
        fprintf(stderr, "[exports-probe] cannot open %s\n", path);
        abort();
    }
    char line[256];
    int resolved = 0, missing = 0;
    while(fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if(line[0] == '\0' || line[0] == '#') continue;
        if(dlsym(RTLD_DEFAULT, line)) {
            ++resolved;
        } else {
            fprintf(stderr, "[exports-probe] missing: %s\n", line);
            ++missing;
        }
    }
    fclose(f);
    fprintf(stderr, "[exports-probe] resolved=%d missing=%d\n", resolved, missing);
    if(missing > 0) abort();
    return NULL;
}
