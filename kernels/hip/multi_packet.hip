// multi-packet: two dispatches submitted as one launch list per round. HIP has no portable call
// that guarantees a single multi-packet queue write (pkt_count > 1); the launch-list API is the
// closest, and whether the runtime batches the packets depends on the ROCm version. The emulator
// models the intercept-level condition exactly; kernel replay runs such writes once without
// CONFIG and warns once. On a GPU where the runtime writes the packets one by one, this workload
// is replayed like any other.
#include "common.h"
#include <hip/hip_ext.h>
#include <vector>

__global__ void multi_packet_node(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    unsigned long long* x;
    HIP_CHECK(hipMalloc(&x, n * sizeof(*x)));
    HIP_CHECK(hipMemset(x, 0, n * sizeof(*x)));
    hipStream_t s;
    HIP_CHECK(hipStreamCreate(&s));
    void* args[] = {&x, const_cast<size_t*>(&n)};
    for (long it = 0; it < iters; ++it) {
        hipLaunchParams p[2];
        for (auto& q : p) {
            q.func = reinterpret_cast<void*>(multi_packet_node);
            q.gridDim = dim3(blocks_for(n, 256));
            q.blockDim = dim3(256);
            q.args = args;
            q.sharedMem = 0;
            q.stream = s;
        }
        // One launch-list call per round (both entries on this device's stream).
        for (auto& q : p) HIP_CHECK(hipExtLaunchMultiKernelMultiDevice(&q, 1, 0));
        HIP_CHECK(hipStreamSynchronize(s));
    }
    std::vector<unsigned long long> hx(n);
    HIP_CHECK(hipMemcpy(hx.data(), x, n * sizeof(*x), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i)
        if (hx[i] != (unsigned long long)(2 * iters)) { std::printf("result multi-packet FAILED x[%zu]=%llu\n", i, hx[i]); return 1; }
    std::printf("result multi-packet ok checksum=%016llx counter=0 dispatches=%ld\n",
                (unsigned long long)fnv1a(FNV_OFFSET, hx.data(), n * sizeof(*x)), 2 * iters);
    HIP_CHECK(hipStreamDestroy(s)); HIP_CHECK(hipFree(x));
    return 0;
}
