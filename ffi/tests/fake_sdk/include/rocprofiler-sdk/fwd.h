/* Test fixture for the `bindgen` feature: declarations written from the layouts in the
 * project's ABI reference (x86-64), not copied from AMD headers. Only the types krphase-ffi
 * checks are declared. Used by docs/bindgen.md's self-check. Define KRPHASE_FAKE_PIPE_ID for
 * newer headers' kernel-dispatch records, which end in `int32_t pipe_id` (callback data 160
 * bytes, buffer record 192). */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef int rocprofiler_status_t;
typedef int32_t rocprofiler_tracing_operation_t;
typedef uint64_t rocprofiler_thread_id_t;
typedef uint64_t rocprofiler_timestamp_t;
typedef enum { ROCPROFILER_CALLBACK_PHASE_NONE = 0 } rocprofiler_callback_phase_t;
typedef enum { ROCPROFILER_CALLBACK_TRACING_NONE = 0 } rocprofiler_callback_tracing_kind_t;
typedef struct { uint64_t handle; } rocprofiler_context_id_t;
typedef struct { uint64_t handle; } rocprofiler_agent_id_t;
typedef struct { uint64_t handle; } rocprofiler_queue_id_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef union { uint64_t value; void* ptr; } rocprofiler_user_data_t;
typedef union { uint64_t handle; uint64_t value; const void* ptr; } rocprofiler_address_t;
typedef struct { uint32_t major, minor, patch; } rocprofiler_version_triplet_t;
typedef struct { uint32_t x, y, z; } rocprofiler_dim3_t;

typedef struct {
    uint64_t internal;
    rocprofiler_user_data_t external;
    uint64_t ancestor;
} rocprofiler_correlation_id_t;

typedef struct {
    uint64_t internal;
    rocprofiler_user_data_t external;
} rocprofiler_async_correlation_id_t;

typedef struct {
    size_t size;
    const char* name;
    const uint32_t handle;
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
    rocprofiler_thread_id_t thread_id;
    rocprofiler_correlation_id_t correlation_id;
    rocprofiler_callback_tracing_kind_t kind;
    rocprofiler_tracing_operation_t operation;
    rocprofiler_callback_phase_t phase;
    void* payload;
} rocprofiler_callback_tracing_record_t;

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

typedef struct {
    uint64_t size;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
#ifdef KRPHASE_FAKE_PIPE_ID
    int32_t pipe_id;
#endif
} rocprofiler_callback_tracing_kernel_dispatch_data_t;

typedef struct {
    uint64_t size;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_agent_id_t agent_id;
    rocprofiler_address_t address;
    uint64_t allocation_size;
} rocprofiler_callback_tracing_memory_allocation_data_t;

typedef struct {
    uint64_t size;
    uint64_t code_object_id;
    union { rocprofiler_agent_id_t agent_id; rocprofiler_agent_id_t rocp_agent; };
    hsa_agent_t hsa_agent;
    const char* uri;
    uint64_t load_base;
    uint64_t load_size;
    int64_t load_delta;
    enum { STORAGE_NONE = 0, STORAGE_FILE, STORAGE_MEMORY } storage_type;
    union {
        int storage_file;
        struct { uint64_t memory_base; uint64_t memory_size; };
    };
} rocprofiler_callback_tracing_code_object_load_data_t;

typedef struct {
    uint64_t size;
    uint64_t kernel_id;
    uint64_t code_object_id;
    const char* kernel_name;
    uint64_t kernel_object;
    uint32_t kernarg_segment_size;
    uint32_t kernarg_segment_alignment;
    uint32_t group_segment_size;
    uint32_t private_segment_size;
    uint32_t sgpr_count;
    uint32_t arch_vgpr_count;
    uint32_t accum_vgpr_count;
    int64_t kernel_code_entry_byte_offset;
    uint64_t kernel_address;
} rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t;

typedef struct {
    union {
        struct { uint32_t category; uint32_t kind; };
        uint64_t hash;
    };
    void* payload;
} rocprofiler_record_header_t;

typedef struct {
    uint64_t size;
    uint32_t kind;
    uint32_t operation;
    rocprofiler_async_correlation_id_t correlation_id;
    rocprofiler_thread_id_t thread_id;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
#ifdef KRPHASE_FAKE_PIPE_ID
    int32_t pipe_id;
#endif
} rocprofiler_buffer_tracing_kernel_dispatch_record_t;

/* The dispatch counting service's basic types. */
typedef struct { uint64_t handle; } rocprofiler_counter_id_t;
typedef struct { uint64_t handle; } rocprofiler_counter_config_id_t;
typedef uint64_t rocprofiler_counter_instance_id_t;
typedef uint64_t rocprofiler_dispatch_id_t;

typedef struct {
    rocprofiler_counter_instance_id_t id;
    double counter_value;
    rocprofiler_dispatch_id_t dispatch_id;
    rocprofiler_user_data_t user_data;
    rocprofiler_agent_id_t agent_id;
} rocprofiler_counter_record_t;
