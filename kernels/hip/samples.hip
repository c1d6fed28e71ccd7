// samples: the application of rocprofiler-sdk's kernel-replay sample clients. Two 4-byte device
// counters start at 0; bump<<<1, 67>>> (the kernel the clients replay, chosen by its block size)
// and nudge<<<1, 64>>> (the one they opt out) each add 1 from thread 0. Both must read 1 after
// every round, which after a replay of bump holds only if every pass started from the restored 0.
#include "common.h"

__global__ void bump(unsigned int* c) {
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

__global__ void nudge(unsigned int* c) {
    if (threadIdx.x == 0) atomicAdd(c, 1u);
}

int main(int argc, char** argv) {
    const long iters = arg_long(argc, argv, "--iterations", 10);
    hipStream_t s;
    HIP_CHECK(hipStreamCreate(&s));
    unsigned int *bumped, *nudged;
    HIP_CHECK(hipMalloc(reinterpret_cast<void**>(&bumped), sizeof(*bumped)));
    HIP_CHECK(hipMalloc(reinterpret_cast<void**>(&nudged), sizeof(*nudged)));
    uint64_t h = FNV_OFFSET;
    for (long it = 0; it < iters; ++it) {
        HIP_CHECK(hipMemsetAsync(bumped, 0, sizeof(*bumped), s));
        HIP_CHECK(hipMemsetAsync(nudged, 0, sizeof(*nudged), s));
        bump<<<1, 67, 0, s>>>(bumped);
        nudge<<<1, 64, 0, s>>>(nudged);
        HIP_CHECK(hipStreamSynchronize(s));
        unsigned int vb = 0, vn = 0;
        HIP_CHECK(hipMemcpy(&vb, bumped, sizeof(vb), hipMemcpyDeviceToHost));
        HIP_CHECK(hipMemcpy(&vn, nudged, sizeof(vn), hipMemcpyDeviceToHost));
        if (vb != 1 || vn != 1) {
            std::printf("result samples FAILED round %ld: bump's counter = %u, nudge's = %u\n", it, vb, vn);
            return 1;
        }
        const uint64_t both = (uint64_t)vb << 32 | vn;
        h = fnv1a(h, &both, sizeof(both));
    }
    std::printf("result samples ok checksum=%016llx counter=%ld dispatches=%ld\n",
                (unsigned long long)h, iters, 2 * iters);
    HIP_CHECK(hipFree(bumped)); HIP_CHECK(hipFree(nudged)); HIP_CHECK(hipStreamDestroy(s));
    return 0;
}
