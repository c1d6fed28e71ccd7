// vmem: a kernel touching memory from hipMallocAsync (a stream-ordered pool backed by virtual
// memory mappings). Kernel replay declines such dispatches with reason untracked_memory.
#include "common.h"
#include <vector>

__global__ void vmem_touch(unsigned long long* v, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    hipStream_t s;
    HIP_CHECK(hipStreamCreate(&s));
    unsigned long long* v;
    HIP_CHECK(hipMallocAsync(reinterpret_cast<void**>(&v), n * sizeof(*v), s));
    HIP_CHECK(hipMemsetAsync(v, 0, n * sizeof(*v), s));
    for (long it = 0; it < iters; ++it) {
        vmem_touch<<<blocks_for(n, 256), 256, 0, s>>>(v, n);
        HIP_CHECK(hipStreamSynchronize(s));
    }
    std::vector<unsigned long long> hv(n);
    HIP_CHECK(hipMemcpy(hv.data(), v, n * sizeof(*v), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i)
        if (hv[i] != (unsigned long long)iters) { std::printf("result vmem FAILED v[%zu]=%llu\n", i, hv[i]); return 1; }
    std::printf("result vmem ok checksum=%016llx counter=0 dispatches=%ld\n",
                (unsigned long long)fnv1a(FNV_OFFSET, hv.data(), n * sizeof(*v)), iters);
    HIP_CHECK(hipFreeAsync(v, s)); HIP_CHECK(hipStreamSynchronize(s)); HIP_CHECK(hipStreamDestroy(s));
    return 0;
}
