// multi-queue: --threads T host threads, each with its own stream, dispatching concurrently.
#include "common.h"
#include <thread>
#include <vector>

__global__ void multi_queue_step(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    const long threads = arg_long(argc, argv, "--threads", 4);
    std::vector<unsigned long long*> bufs(threads);
    for (auto& b : bufs) { HIP_CHECK(hipMalloc(&b, n * sizeof(*b))); HIP_CHECK(hipMemset(b, 0, n * sizeof(*b))); }
    std::vector<std::thread> pool;
    for (long t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            hipStream_t s;
            HIP_CHECK(hipStreamCreate(&s));
            for (long it = 0; it < iters; ++it) {
                multi_queue_step<<<blocks_for(n, 256), 256, 0, s>>>(bufs[t], n);
                HIP_CHECK(hipStreamSynchronize(s));
            }
            HIP_CHECK(hipStreamDestroy(s));
        });
    }
    for (auto& th : pool) th.join();
    uint64_t h = FNV_OFFSET;
    std::vector<unsigned long long> hx(n);
    for (long t = 0; t < threads; ++t) {
        HIP_CHECK(hipMemcpy(hx.data(), bufs[t], n * sizeof(*hx.data()), hipMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i)
            if (hx[i] != (unsigned long long)iters) { std::printf("result multi-queue FAILED thread %ld\n", t); return 1; }
        h = fnv1a(h, hx.data(), n * sizeof(*hx.data()));
        HIP_CHECK(hipFree(bufs[t]));
    }
    std::printf("result multi-queue ok checksum=%016llx counter=0 dispatches=%ld\n", (unsigned long long)h, iters * threads);
    return 0;
}
