// saxpy with a module-scope call counter: the kernel-replay restore oracle. After a run with N
// replay passes, y and saxpy_calls must equal the run without replay.
// Mirrors krphase-kernels/src/saxpy.rs.
#include "common.h"
#include <vector>

__device__ unsigned long long saxpy_calls = 0;

__global__ void saxpy(double a, const double* x, double* y, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
    if (i == 0) saxpy_calls += 1;
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    double *x, *y;
    HIP_CHECK(hipMalloc(&x, n * sizeof(double)));
    HIP_CHECK(hipMalloc(&y, n * sizeof(double)));
    std::vector<double> hx(n, 1.0), hy(n, 0.5);
    HIP_CHECK(hipMemcpy(x, hx.data(), n * sizeof(double), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(y, hy.data(), n * sizeof(double), hipMemcpyHostToDevice));
    for (long it = 0; it < iters; ++it) {
        saxpy<<<blocks_for(n, 256), 256>>>(2.0, x, y, n);
        HIP_CHECK(hipDeviceSynchronize());
    }
    unsigned long long calls = 0;
    HIP_CHECK(hipMemcpyFromSymbol(&calls, HIP_SYMBOL(saxpy_calls), sizeof(calls)));
    HIP_CHECK(hipMemcpy(hy.data(), y, n * sizeof(double), hipMemcpyDeviceToHost));
    double ey = 0.5;
    for (long it = 0; it < iters; ++it) ey += 2.0 * 1.0;
    for (size_t i = 0; i < n; ++i) {
        if (hy[i] != ey) { std::printf("result saxpy FAILED y[%zu]=%.17g want %.17g\n", i, hy[i], ey); return 1; }
    }
    if (calls != (unsigned long long)iters) {
        std::printf("result saxpy FAILED saxpy_calls=%llu want %ld\n", calls, iters);
        return 1;
    }
    uint64_t h = fnv1a(FNV_OFFSET, hy.data(), n * sizeof(double));
    h = fnv1a(h, &calls, sizeof(calls));
    std::printf("result saxpy ok checksum=%016llx counter=%llu dispatches=%ld\n", (unsigned long long)h, calls, iters);
    HIP_CHECK(hipFree(x)); HIP_CHECK(hipFree(y));
    return 0;
}
