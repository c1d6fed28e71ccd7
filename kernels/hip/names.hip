// names: kernels whose names need a real demangler, the way rocprofv3 shows and filters them:
// a namespaced saxpy, a template with two instantiations, an overloaded pair and an extern "C"
// kernel. Each launch adds `by` (1, or the overload's argument) to every element of its own
// array, so the result counts how often each kernel really ran.
// Mirrors krphase-emu's `names` workload (kernels/emu/src/workloads.rs) over steps.rs.
#include "common.h"
#include <vector>

namespace krp {
// krp::saxpy(unsigned long long*, unsigned long): '^saxpy' does not select it.
__global__ void saxpy(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
}  // namespace krp

// void step<unsigned long long>(…) and void step<long long>(…): truncated, both are `step`.
template <typename T>
__global__ void step(T* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
template __global__ void step<unsigned long long>(unsigned long long*, size_t);
template __global__ void step<long long>(long long*, size_t);

// touch(unsigned long long*, unsigned long) and its overload with an increment.
__global__ void touch(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
__global__ void touch(unsigned long long* x, size_t n, unsigned long long by) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += by;
}

// Not mangled at all: its symbol is `names_plain.kd`.
extern "C" __global__ void names_plain(unsigned long long* x, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    const int kernels = 6;
    unsigned long long* x;
    HIP_CHECK(hipMalloc(&x, kernels * n * sizeof(*x)));
    HIP_CHECK(hipMemset(x, 0, kernels * n * sizeof(*x)));
    const unsigned grid = blocks_for(n, 256);
    for (long it = 0; it < iters; ++it) {
        krp::saxpy<<<grid, 256>>>(x, n);
        step<unsigned long long><<<grid, 256>>>(x + n, n);
        step<long long><<<grid, 256>>>(reinterpret_cast<long long*>(x + 2 * n), n);
        touch<<<grid, 256>>>(x + 3 * n, n);
        touch<<<grid, 256>>>(x + 4 * n, n, 2ull);
        names_plain<<<grid, 256>>>(x + 5 * n, n);
        HIP_CHECK(hipDeviceSynchronize());
    }
    std::vector<unsigned long long> hx(kernels * n);
    HIP_CHECK(hipMemcpy(hx.data(), x, hx.size() * sizeof(*x), hipMemcpyDeviceToHost));
    for (int k = 0; k < kernels; ++k) {
        const unsigned long long want = (unsigned long long)iters * (k == 4 ? 2 : 1);
        for (size_t i = 0; i < n; ++i)
            if (hx[k * n + i] != want) {
                std::printf("result names FAILED kernel %d x[%zu]=%llu want %llu\n", k, i, hx[k * n + i], want);
                return 1;
            }
    }
    std::printf("result names ok checksum=%016llx counter=0 dispatches=%ld\n",
                (unsigned long long)fnv1a(FNV_OFFSET, hx.data(), hx.size() * sizeof(*x)), iters * kernels);
    HIP_CHECK(hipFree(x));
    return 0;
}
