// queue-depth: --depth K dispatches enqueued between synchronizations, --iterations rounds.
// Each dispatch adds 1 to every element, so the result counts the executions.
#include "common.h"
#include <vector>

__global__ void queue_depth_step(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    const long depth = arg_long(argc, argv, "--depth", 10);
    unsigned long long* x;
    HIP_CHECK(hipMalloc(&x, n * sizeof(*x)));
    HIP_CHECK(hipMemset(x, 0, n * sizeof(*x)));
    for (long it = 0; it < iters; ++it) {
        for (long k = 0; k < depth; ++k) queue_depth_step<<<blocks_for(n, 256), 256>>>(x, n);
        HIP_CHECK(hipDeviceSynchronize());
    }
    std::vector<unsigned long long> hx(n);
    HIP_CHECK(hipMemcpy(hx.data(), x, n * sizeof(*x), hipMemcpyDeviceToHost));
    const unsigned long long want = (unsigned long long)(iters * depth);
    for (size_t i = 0; i < n; ++i)
        if (hx[i] != want) { std::printf("result queue-depth FAILED x[%zu]=%llu want %llu\n", i, hx[i], want); return 1; }
    std::printf("result queue-depth ok checksum=%016llx counter=0 dispatches=%ld\n",
                (unsigned long long)fnv1a(FNV_OFFSET, hx.data(), n * sizeof(*x)), iters * depth);
    HIP_CHECK(hipFree(x));
    return 0;
}
