// graph: a captured 3-node graph launched --iterations times. Kernel replay declines graph
// launches (no CONFIG callback) and warns once.
#include "common.h"
#include <vector>

__global__ void graph_node(unsigned long long* x, size_t n) {
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
    hipGraph_t graph;
    hipGraphExec_t exec;
    HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    for (int k = 0; k < 3; ++k) graph_node<<<blocks_for(n, 256), 256, 0, s>>>(x, n);
    HIP_CHECK(hipStreamEndCapture(s, &graph));
    HIP_CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    for (long it = 0; it < iters; ++it) {
        HIP_CHECK(hipGraphLaunch(exec, s));
        HIP_CHECK(hipStreamSynchronize(s));
    }
    std::vector<unsigned long long> hx(n);
    HIP_CHECK(hipMemcpy(hx.data(), x, n * sizeof(*x), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i)
        if (hx[i] != (unsigned long long)(3 * iters)) { std::printf("result graph FAILED x[%zu]=%llu\n", i, hx[i]); return 1; }
    std::printf("result graph ok checksum=%016llx counter=0 dispatches=%ld\n",
                (unsigned long long)fnv1a(FNV_OFFSET, hx.data(), n * sizeof(*x)), 3 * iters);
    HIP_CHECK(hipGraphExecDestroy(exec)); HIP_CHECK(hipGraphDestroy(graph));
    HIP_CHECK(hipStreamDestroy(s)); HIP_CHECK(hipFree(x));
    return 0;
}
