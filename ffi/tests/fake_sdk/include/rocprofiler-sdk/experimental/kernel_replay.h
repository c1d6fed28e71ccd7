/* Test fixture (see ../fwd.h): the kernel-replay payload. Layout B by default; define
 * KRPHASE_FAKE_LAYOUT_A (e.g. BINDGEN_EXTRA_CLANG_ARGS=-DKRPHASE_FAKE_LAYOUT_A) for Layout A
 * with its 64-byte tail padding, or KRPHASE_FAKE_LAYOUT_A_NEW_NAMES for the header version
 * that keeps Layout A's order and padding under Layout B's field names (names do not tell the
 * layout). */
#pragma once
#include <rocprofiler-sdk/fwd.h>

typedef uint64_t (*rocprofiler_kernel_replay_pass_count_cb_t)(rocprofiler_kernel_dispatch_info_t,
                                                              rocprofiler_user_data_t);
typedef int (*rocprofiler_kernel_replay_continue_cb_t)(rocprofiler_kernel_dispatch_info_t, uint64_t,
                                                       uint64_t, rocprofiler_user_data_t);
typedef rocprofiler_status_t (*rocprofiler_kernel_replay_context_cb_t)(rocprofiler_context_id_t);

#if defined(KRPHASE_FAKE_LAYOUT_A_NEW_NAMES)
typedef struct {
    uint64_t size;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
    rocprofiler_kernel_replay_pass_count_cb_t replay_pass_count;
    rocprofiler_kernel_replay_continue_cb_t replay_continue;
    uint64_t current_pass;
    uint64_t total_passes;
    rocprofiler_kernel_replay_context_cb_t replay_start_context;
    rocprofiler_kernel_replay_context_cb_t replay_stop_context;
    uint8_t reserved_padding[64];
} rocprofiler_callback_tracing_kernel_replay_data_t;
#elif defined(KRPHASE_FAKE_LAYOUT_A)
typedef struct {
    uint64_t size;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
    rocprofiler_kernel_replay_pass_count_cb_t pass_count_cb;
    rocprofiler_kernel_replay_continue_cb_t replay_continue_cb;
    uint64_t current_pass;
    uint64_t total_passes;
    rocprofiler_kernel_replay_context_cb_t replay_local_enable_context_cb;
    rocprofiler_kernel_replay_context_cb_t replay_local_disable_context_cb;
    uint8_t reserved_padding[64];
} rocprofiler_callback_tracing_kernel_replay_data_t;
#else
typedef struct {
    uint64_t size;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
    uint64_t current_pass;
    uint64_t total_passes;
    rocprofiler_kernel_replay_pass_count_cb_t replay_pass_count;
    rocprofiler_kernel_replay_continue_cb_t replay_continue;
    rocprofiler_kernel_replay_context_cb_t replay_start_context;
    rocprofiler_kernel_replay_context_cb_t replay_stop_context;
} rocprofiler_callback_tracing_kernel_replay_data_t;
#endif
