/* Test fixture (see fwd.h): what both dispatch counting callbacks receive. */
#pragma once
#include <rocprofiler-sdk/fwd.h>

typedef struct {
    uint64_t size;
    rocprofiler_async_correlation_id_t correlation_id;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_dispatch_counting_service_data_t;
