// Shared helpers for the krphase HIP workloads.
#pragma once
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>

#define HIP_CHECK(expr)                                                                  \
    do {                                                                                 \
        hipError_t err_ = (expr);                                                        \
        if (err_ != hipSuccess) {                                                        \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,  \
                         hipGetErrorString(err_));                                       \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

// --name N style options: returns the value after `flag`, or `def`.
static inline long arg_long(int argc, char** argv, const char* flag, long def) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return std::strtol(argv[i + 1], nullptr, 10);
    return def;
}

// FNV-1a over raw bytes: the checksum printed in the result line.
static inline uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 0x100000001b3ULL; }
    return h;
}
static const uint64_t FNV_OFFSET = 0xcbf29ce484222325ULL;

static inline unsigned blocks_for(size_t n, unsigned block) {
    return static_cast<unsigned>((n + block - 1) / block);
}
