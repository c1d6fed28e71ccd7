/* The rocprofiler-sdk C ABI subset the conformance clients use, declared here from krphase's
 * own ABI notes (field order, sizes and enum numbers as the SDK's public headers lay them out on
 * x86-64), not copied from the SDK's headers.
 *
 * Build-time choices, as a client compiled against one SDK build would have them:
 *   KRP_KIND=<n>        the KERNEL_REPLAY callback-tracing kind number (23, 25 or 26)
 *   KRP_LAYOUT_A        the older payload field order (callbacks at 136/144, padding to 248),
 *                       here with the newer field names, as one header version has it;
 *                       without it, Layout B (pass fields at 136/144, 184 bytes)
 *   KRP_CONTINUE_PASS   (user-data client) replay_continue receives the pass's own user_data,
 *                       as PASS EXIT left it (the header's text at ROCm 02c1fdd9)
 *   KRP_CONTINUE_CONFIG (user-data client) replay_continue receives the CONFIG value (headers
 *                       c02152fd, 81d118a2; the user-data sample at dc5877e3)
 *   KRP_PASS_COUNT_ONE_REPLAYS (pass-count-one client) a pass count of 1 runs a loop of one
 *                       pass (headers c02152fd, 81d118a2); without it, 1 is not replayed
 *                       (header 02c1fdd9)
 *
 * Every client reacts only to the samples application's replayed kernel (work-group size 67)
 * or its opted-out one (64), checks its counts in its finalize and aborts on a mismatch.
 */
#ifndef KRP_CLIENT_H
#define KRP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef KRP_KIND
#error "compile with -DKRP_KIND=<KERNEL_REPLAY kind number>"
#endif

#define KRP_REPLAY_BLOCK 67u
#define KRP_OPT_OUT_BLOCK 64u

#define KRP_REQUIRE(cond, msg)                                                   \
    do {                                                                         \
        if(!(cond)) {                                                            \
            fprintf(stderr, "[%s] requirement failed: %s\n", KRP_CLIENT, (msg)); \
            abort();                                                             \
        }                                                                        \
    } while(0)
#define KRP_CHECK(call) KRP_REQUIRE((call) == 0, #call " returned an error")

typedef uint32_t rocprofiler_status_t;
typedef struct { uint64_t handle; } rocprofiler_context_id_t;
typedef struct { uint64_t handle; } rocprofiler_agent_id_t;
typedef struct { uint64_t handle; } rocprofiler_queue_id_t;
typedef struct { uint64_t handle; } rocprofiler_counter_id_t;
typedef struct { uint64_t handle; } rocprofiler_counter_config_id_t;
typedef union { uint64_t value; void* ptr; } rocprofiler_user_data_t;
typedef struct { uint32_t x, y, z; } rocprofiler_dim3_t;
typedef struct { uint64_t internal; rocprofiler_user_data_t external; uint64_t ancestor; } rocprofiler_correlation_id_t;
typedef struct { uint64_t internal; rocprofiler_user_data_t external; } rocprofiler_async_correlation_id_t;

typedef struct {
    size_t size;
    const char* name;
    uint32_t handle;
} rocprofiler_client_id_t;

typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);
typedef int (*rocprofiler_tool_initialize_t)(rocprofiler_client_finalize_t, void*);
typedef void (*rocprofiler_tool_finalize_t)(void*);

typedef struct {
    size_t size;
    rocprofiler_tool_initialize_t initialize;
    rocprofiler_tool_finalize_t finalize;
    void* tool_data;
} rocprofiler_tool_configure_result_t;

typedef struct {
    rocprofiler_context_id_t context_id;
    uint64_t thread_id;
    rocprofiler_correlation_id_t correlation_id;
    uint32_t kind;
    int32_t operation;
    uint32_t phase;
    void* payload;
} rocprofiler_callback_tracing_record_t;

enum { KRP_PHASE_ENTER = 1, KRP_PHASE_EXIT = 2 };
enum { KRP_REPLAY_CONFIG = 1, KRP_REPLAY_PASS = 2 };

typedef struct {
    uint64_t size;
    rocprofiler_agent_id_t agent_id;
    rocprofiler_queue_id_t queue_id;
    uint64_t kernel_id;
    uint64_t dispatch_id;
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    rocprofiler_dim3_t workgroup_size;
    rocprofiler_dim3_t grid_size;
    uint8_t reserved_padding[56];
} rocprofiler_kernel_dispatch_info_t;

typedef uint64_t (*krp_pass_count_cb_t)(rocprofiler_kernel_dispatch_info_t, rocprofiler_user_data_t);
typedef int (*krp_continue_cb_t)(rocprofiler_kernel_dispatch_info_t, uint64_t, uint64_t, rocprofiler_user_data_t);
typedef rocprofiler_status_t (*krp_context_cb_t)(rocprofiler_context_id_t);

#ifdef KRP_LAYOUT_A
typedef struct {
    uint64_t size;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
    krp_pass_count_cb_t replay_pass_count;
    krp_continue_cb_t replay_continue;
    uint64_t current_pass;
    uint64_t total_passes;
    krp_context_cb_t replay_start_context;
    krp_context_cb_t replay_stop_context;
    uint8_t reserved_padding[64];
} rocprofiler_callback_tracing_kernel_replay_data_t;
_Static_assert(sizeof(rocprofiler_callback_tracing_kernel_replay_data_t) == 248, "Layout A");
_Static_assert(offsetof(rocprofiler_callback_tracing_kernel_replay_data_t, replay_pass_count) == 136, "A");
#else
typedef struct {
    uint64_t size;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
    uint64_t current_pass;
    uint64_t total_passes;
    krp_pass_count_cb_t replay_pass_count;
    krp_continue_cb_t replay_continue;
    krp_context_cb_t replay_start_context;
    krp_context_cb_t replay_stop_context;
} rocprofiler_callback_tracing_kernel_replay_data_t;
_Static_assert(sizeof(rocprofiler_callback_tracing_kernel_replay_data_t) == 184, "Layout B");
_Static_assert(offsetof(rocprofiler_callback_tracing_kernel_replay_data_t, replay_pass_count) == 152, "B");
#endif

typedef void (*rocprofiler_callback_tracing_cb_t)(rocprofiler_callback_tracing_record_t,
                                                  rocprofiler_user_data_t*, void*);

typedef struct {
    uint64_t size;
    rocprofiler_async_correlation_id_t correlation_id;
    uint64_t start_timestamp;
    uint64_t end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_dispatch_counting_service_data_t;
_Static_assert(sizeof(rocprofiler_dispatch_counting_service_data_t) == 168, "counting data");

typedef struct {
    uint64_t id;
    double counter_value;
    uint64_t dispatch_id;
    rocprofiler_user_data_t user_data;
    rocprofiler_agent_id_t agent_id;
} rocprofiler_counter_record_t;
_Static_assert(sizeof(rocprofiler_counter_record_t) == 40, "counter record");

typedef struct {
    rocprofiler_counter_id_t id;
    const char* name;
    const char* description;
    const char* block;
    const char* expression;
    uint8_t is_constant : 1;
    uint8_t is_derived : 1;
} rocprofiler_counter_info_v0_t;
_Static_assert(sizeof(rocprofiler_counter_info_v0_t) == 48, "counter info v0");
enum { KRP_COUNTER_INFO_VERSION_0 = 1 };

typedef void (*rocprofiler_dispatch_counting_service_cb_t)(
    rocprofiler_dispatch_counting_service_data_t, rocprofiler_counter_config_id_t*,
    rocprofiler_user_data_t*, void*);
typedef void (*rocprofiler_dispatch_counting_record_cb_t)(
    rocprofiler_dispatch_counting_service_data_t, rocprofiler_counter_record_t*, size_t,
    rocprofiler_user_data_t, void*);
typedef rocprofiler_status_t (*rocprofiler_available_counters_cb_t)(
    rocprofiler_agent_id_t, rocprofiler_counter_id_t*, size_t, void*);

const char* rocprofiler_get_status_name(rocprofiler_status_t);
const char* rocprofiler_get_status_string(rocprofiler_status_t);
rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t*);
rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t);
rocprofiler_status_t rocprofiler_configure_callback_tracing_service(
    rocprofiler_context_id_t, uint32_t, const int32_t*, size_t, rocprofiler_callback_tracing_cb_t,
    void*);
rocprofiler_status_t rocprofiler_configure_callback_dispatch_counting_service(
    rocprofiler_context_id_t, rocprofiler_dispatch_counting_service_cb_t, void*,
    rocprofiler_dispatch_counting_record_cb_t, void*);
rocprofiler_status_t rocprofiler_iterate_agent_supported_counters(
    rocprofiler_agent_id_t, rocprofiler_available_counters_cb_t, void*);
rocprofiler_status_t rocprofiler_query_counter_info(rocprofiler_counter_id_t, uint32_t, void*);
rocprofiler_status_t rocprofiler_query_record_counter_id(uint64_t, rocprofiler_counter_id_t*);
rocprofiler_status_t rocprofiler_create_counter_config(rocprofiler_agent_id_t,
                                                       rocprofiler_counter_id_t*, size_t,
                                                       rocprofiler_counter_config_id_t*);

/* Defines `name`, a replay_pass_count callback asking for `n` passes for every dispatch. */
#define KRP_PASS_COUNT(name, n)                                                            \
    static uint64_t name(rocprofiler_kernel_dispatch_info_t info, rocprofiler_user_data_t ud) { \
        (void) info;                                                                       \
        (void) ud;                                                                         \
        return (n);                                                                        \
    }

/* Registers `cb` for KERNEL_REPLAY in a new started context. */
static inline void krp_replay_service(rocprofiler_callback_tracing_cb_t cb, void* data) {
    rocprofiler_context_id_t ctx = {0};
    KRP_CHECK(rocprofiler_create_context(&ctx));
    KRP_CHECK(rocprofiler_configure_callback_tracing_service(ctx, KRP_KIND, NULL, 0, cb, data));
    KRP_CHECK(rocprofiler_start_context(ctx));
}

static inline rocprofiler_callback_tracing_kernel_replay_data_t* krp_payload(
    rocprofiler_callback_tracing_record_t r) {
    return (rocprofiler_callback_tracing_kernel_replay_data_t*) r.payload;
}

/* The tool's configure result, shared by every client; they return NULL for priority > 0. */
#define KRP_CONFIGURE(init, fini)                                                          \
    rocprofiler_tool_configure_result_t* rocprofiler_configure(                           \
        uint32_t version, const char* runtime, uint32_t priority,                         \
        rocprofiler_client_id_t* id) {                                                     \
        static rocprofiler_tool_configure_result_t cfg = {                                \
            sizeof(rocprofiler_tool_configure_result_t), (init), (fini), NULL};           \
        (void) version;                                                                    \
        (void) runtime;                                                                    \
        if(priority > 0) return NULL;                                                      \
        id->name = KRP_CLIENT;                                                             \
        return &cfg;                                                                       \
    }

#endif
