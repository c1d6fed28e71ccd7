/* Test fixture (see fwd.h): version-0 counter info, with the two one-bit flags. */
#pragma once
#include <rocprofiler-sdk/fwd.h>

typedef struct {
    rocprofiler_counter_id_t id;
    const char* name;
    const char* description;
    const char* block;
    const char* expression;
    uint8_t is_constant : 1;
    uint8_t is_derived : 1;
} rocprofiler_counter_info_v0_t;
