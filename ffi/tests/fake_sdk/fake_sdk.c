/* A tiny stand-in for rocprofiler-sdk, written for krphase-ffi's loader tests from the rules in
 * the project's ABI reference. Compiled at test time with `cc -shared -fPIC`.
 *
 *   -DFAKE_OMIT_TIMESTAMP  leave out rocprofiler_get_timestamp (a required symbol)
 *   -DFAKE_NO_OPTIONAL     leave out every optional symbol
 *
 * Kinds: the stable 0..24, then HIP_EVENT 25, KERNEL_REPLAY 26, RANGE_REPLAY 27, LAST 28, so
 * that a tool hard-coding 25 would pick the wrong kind. KERNEL_REPLAY is one-owner per process:
 * a second configure of it (any context) returns 15 (SERVICE_ALREADY_CONFIGURED). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef struct { uint64_t handle; } ctx_id_t;
typedef union { uint64_t value; void* ptr; } user_data_t;
typedef struct { uint64_t internal; user_data_t external; uint64_t ancestor; } corr_id_t;
typedef struct {
    ctx_id_t context_id;
    uint64_t thread_id;
    corr_id_t correlation_id;
    uint32_t kind;
    int32_t operation;
    uint32_t phase;
    void* payload;
} record_t;
typedef void (*tracing_cb_t)(record_t, user_data_t*, void*);
typedef int (*kind_cb_t)(uint32_t, void*);
typedef int (*op_cb_t)(uint32_t, int32_t, void*);
typedef struct { uint32_t x, y, z; } dim3_t;
typedef struct {
    uint64_t size, agent_id, queue_id, kernel_id, dispatch_id;
    uint32_t private_segment_size, group_segment_size;
    dim3_t workgroup_size, grid_size;
    uint8_t reserved_padding[56];
} dispatch_info_t;
typedef uint64_t (*pass_count_cb_t)(dispatch_info_t, user_data_t);
typedef struct { uint32_t major, minor, patch; } triplet_t;

#define KIND_LAST 28
#define KIND_KERNEL_DISPATCH 12
#define KIND_KERNEL_REPLAY 26
static const char* const kind_names[KIND_LAST] = {
    "NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API",
    "HIP_RUNTIME_API", "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API",
    "MARKER_NAME_API", "CODE_OBJECT", "SCRATCH_MEMORY", "KERNEL_DISPATCH", "MEMORY_COPY",
    "RCCL_API", "OMPT", "MEMORY_ALLOCATION", "RUNTIME_INITIALIZATION", "ROCDECODE_API",
    "ROCJPEG_API", "HIP_STREAM", "MARKER_CORE_RANGE_API", "HIP_GRAPH", "ROCSHMEM_API",
    "HIPFILE_API", "HIP_EVENT", "KERNEL_REPLAY", "RANGE_REPLAY"};
static const char* const replay_ops[] = {"KERNEL_REPLAY_NONE", "KERNEL_REPLAY_CONFIG",
                                         "KERNEL_REPLAY_PASS"};
static const char* const dispatch_ops[] = {"NONE", "ENQUEUE", "COMPLETE"};

enum { OK = 0, CONTEXT_NOT_FOUND = 2, KIND_NOT_FOUND = 4, OPERATION_NOT_FOUND = 5,
       CONTEXT_ID_NOT_ZERO = 13, SERVICE_ALREADY_CONFIGURED = 15, INVALID_ARGUMENT = 19 };

#define MAX_CTX 8
static uint64_t n_contexts;
static int active[MAX_CTX + 1];
static tracing_cb_t callbacks[MAX_CTX + 1][KIND_LAST];
static void* callback_data[MAX_CTX + 1][KIND_LAST];
static int replay_claimed;

static int n_ops(uint32_t kind) {
    if (kind == KIND_KERNEL_REPLAY) return 3;
    if (kind == KIND_KERNEL_DISPATCH) return 3;
    return 1; /* NONE only */
}
static const char* op_name(uint32_t kind, int32_t op) {
    if (op < 0 || op >= n_ops(kind)) return NULL;
    if (kind == KIND_KERNEL_REPLAY) return replay_ops[op];
    return dispatch_ops[op];
}

int rocprofiler_get_version_triplet(triplet_t* t) {
    t->major = 1; t->minor = 4; t->patch = 1;
    return OK;
}
int rocprofiler_create_context(ctx_id_t* id) {
    if (id->handle != 0) return CONTEXT_ID_NOT_ZERO;
    if (n_contexts >= MAX_CTX) return 9;
    id->handle = ++n_contexts;
    return OK;
}
static int known(ctx_id_t id) { return id.handle >= 1 && id.handle <= n_contexts; }
int rocprofiler_start_context(ctx_id_t id) {
    if (!known(id)) return CONTEXT_NOT_FOUND;
    active[id.handle] = 1;
    return OK;
}
int rocprofiler_stop_context(ctx_id_t id) {
    if (!known(id)) return CONTEXT_NOT_FOUND;
    active[id.handle] = 0;
    return OK;
}
int rocprofiler_configure_callback_tracing_service(ctx_id_t id, uint32_t kind, const int32_t* ops,
                                                   size_t n, tracing_cb_t cb, void* data) {
    if (!known(id)) return CONTEXT_NOT_FOUND;
    if (kind == 0 || kind >= KIND_LAST) return KIND_NOT_FOUND;
    for (size_t i = 0; ops && i < n; ++i)
        if (!op_name(kind, ops[i])) return OPERATION_NOT_FOUND;
    if (callbacks[id.handle][kind]) return SERVICE_ALREADY_CONFIGURED;
    if (kind == KIND_KERNEL_REPLAY) {
        if (replay_claimed) return SERVICE_ALREADY_CONFIGURED;
        replay_claimed = 1;
    }
    callbacks[id.handle][kind] = cb;
    callback_data[id.handle][kind] = data;
    return OK;
}
int rocprofiler_query_callback_tracing_kind_name(uint32_t kind, const char** name, uint64_t* len) {
    if (kind >= KIND_LAST) return KIND_NOT_FOUND;
    *name = kind_names[kind];
    if (len) *len = strlen(kind_names[kind]);
    return OK;
}
int rocprofiler_query_callback_tracing_kind_operation_name(uint32_t kind, int32_t op,
                                                           const char** name, uint64_t* len) {
    if (kind > KIND_LAST) return KIND_NOT_FOUND;
    if (kind == 0 || kind == KIND_LAST) return INVALID_ARGUMENT;
    const char* s = op_name(kind, op);
    if (!s) { *name = NULL; if (len) *len = 0; return OPERATION_NOT_FOUND; }
    *name = s;
    if (len) *len = strlen(s);
    return OK;
}
int rocprofiler_iterate_callback_tracing_kinds(kind_cb_t cb, void* data) {
    for (uint32_t k = 0; k < KIND_LAST; ++k) /* includes NONE, as the real SDK does */
        if (cb(k, data) != 0) break;
    return OK;
}
int rocprofiler_iterate_callback_tracing_kind_operations(uint32_t kind, op_cb_t cb, void* data) {
    if (kind == 0 || kind >= KIND_LAST) return INVALID_ARGUMENT;
    for (int32_t op = 0; op < n_ops(kind); ++op)
        if (cb(kind, op, data) != 0) break;
    return OK;
}
#ifndef FAKE_OMIT_TIMESTAMP
int rocprofiler_get_timestamp(uint64_t* ts) {
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    *ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    return OK;
}
#endif

#ifndef FAKE_NO_OPTIONAL
int rocprofiler_get_version(uint32_t* major, uint32_t* minor, uint32_t* patch) {
    if (major) *major = 1;
    if (minor) *minor = 4;
    if (patch) *patch = 1;
    return OK;
}
int rocprofiler_get_thread_id(uint64_t* tid) {
    *tid = (uint64_t)syscall(SYS_gettid);
    return OK;
}
const char* rocprofiler_get_status_name(int status) {
    return status == SERVICE_ALREADY_CONFIGURED ? "ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED"
                                                : NULL;
}
int rocprofiler_context_is_active(ctx_id_t id, int* status) {
    if (!known(id)) return CONTEXT_NOT_FOUND;
    *status = active[id.handle];
    return OK;
}
int rocprofiler_is_initialized(int* status) { *status = 1; return OK; }
int rocprofiler_is_finalized(int* status) { *status = 0; return OK; }

/* hsa_amd_pointer_info_t as the reference gives it (56 B). */
typedef struct {
    uint32_t size, type;
    void* agent_base;
    void* host_base;
    size_t size_in_bytes;
    void* user_data;
    uint64_t agent_owner;
    uint32_t global_flags;
    _Bool registered;
} pointer_info_t;
int hsa_amd_pointer_info(const void* ptr, pointer_info_t* info, void* (*alloc)(size_t),
                         uint32_t* n, void** agents) {
    (void)alloc; (void)n; (void)agents;
    if (info->size < 52) return 1;
    info->size = sizeof(pointer_info_t);
    info->type = 1; /* HSA */
    info->agent_base = (void*)((uintptr_t)ptr & ~(uintptr_t)0xfff);
    info->host_base = info->agent_base;
    info->size_in_bytes = 4096;
    info->user_data = NULL;
    info->agent_owner = 7;
    info->global_flags = 4; /* COARSE_GRAINED */
    info->registered = 0;
    return 0;
}
#endif

/* ---- test drivers (not SDK API): deliver callbacks the way the SDK does ---- */

/* Layout B payload, 184 bytes. */
typedef struct {
    uint64_t size;
    dispatch_info_t dispatch_info;
    uint64_t current_pass, total_passes;
    pass_count_cb_t replay_pass_count;
    void* replay_continue;
    void* replay_start_context;
    void* replay_stop_context;
} replay_b_t;
/* Layout A payload, with the 64-byte tail padding of the header that introduced it. */
typedef struct {
    uint64_t size;
    dispatch_info_t dispatch_info;
    pass_count_cb_t pass_count_cb;
    void* replay_continue_cb;
    uint64_t current_pass, total_passes;
    void* enable_cb;
    void* disable_cb;
    uint8_t reserved_padding[64];
} replay_a_t;

/* Fires CONFIG ENTER at the context that owns KERNEL_REPLAY with a payload in `layout` ('a' or
 * 'b'), then calls the pass-count callback the tool stored, passing dispatch_info by value.
 * Returns the pass count, or UINT64_MAX when no owner / no pass-count callback. */
uint64_t fake_sdk_fire_replay_config(int layout, uint64_t dispatch_id, uint64_t kernel_id) {
    for (uint64_t c = 1; c <= n_contexts; ++c) {
        tracing_cb_t cb = callbacks[c][KIND_KERNEL_REPLAY];
        if (!cb || !active[c]) continue;
        dispatch_info_t di;
        memset(&di, 0, sizeof di);
        di.size = offsetof(dispatch_info_t, reserved_padding);
        di.agent_id = 3; di.queue_id = 4; di.kernel_id = kernel_id; di.dispatch_id = dispatch_id;
        di.private_segment_size = 16; di.group_segment_size = 1024;
        di.workgroup_size = (dim3_t){256, 1, 1};
        di.grid_size = (dim3_t){1048576, 2, 3};
        record_t r;
        memset(&r, 0, sizeof r);
        r.context_id.handle = c;
        r.thread_id = (uint64_t)syscall(SYS_gettid);
        r.correlation_id.internal = dispatch_id + 1000;
        r.correlation_id.external.value = 77;
        r.correlation_id.ancestor = 5;
        r.kind = KIND_KERNEL_REPLAY;
        r.operation = 1; /* CONFIG */
        r.phase = 1;     /* ENTER */
        user_data_t ud = {0};
        pass_count_cb_t pc;
        if (layout == 'a') {
            replay_a_t p;
            memset(&p, 0, sizeof p);
            p.size = offsetof(replay_a_t, reserved_padding); /* 184, as the real header */
            p.dispatch_info = di;
            r.payload = &p;
            cb(r, &ud, callback_data[c][KIND_KERNEL_REPLAY]);
            pc = p.pass_count_cb;
        } else {
            replay_b_t p;
            memset(&p, 0, sizeof p);
            p.size = sizeof p;
            p.dispatch_info = di;
            r.payload = &p;
            cb(r, &ud, callback_data[c][KIND_KERNEL_REPLAY]);
            pc = p.replay_pass_count;
        }
        if (!pc) return UINT64_MAX;
        return pc(di, ud);
    }
    return UINT64_MAX;
}
