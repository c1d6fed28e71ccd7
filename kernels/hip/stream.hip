// STREAM copy, mul, add, triad, dot over --elements N doubles for --iterations rounds.
// Mirrors krphase-kernels/src/stream.rs.
#include "common.h"
#include <vector>
#include <cmath>

constexpr double SCALAR = 0.4;
constexpr unsigned BLOCK = 256;

__global__ void stream_copy(const double* a, double* c, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}
__global__ void stream_mul(double* b, const double* c, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = SCALAR * c[i];
}
__global__ void stream_add(const double* a, const double* b, double* c, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void stream_triad(double* a, const double* b, const double* c, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] + SCALAR * c[i];
}
__global__ void stream_dot(const double* a, const double* b, double* sum, size_t n) {
    __shared__ double part[BLOCK];
    double s = 0.0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        s += a[i] * b[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned off = blockDim.x / 2; off > 0; off /= 2) {
        if (threadIdx.x < off) part[threadIdx.x] += part[threadIdx.x + off];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

int main(int argc, char** argv) {
    const size_t n = arg_long(argc, argv, "--elements", 1 << 20);
    const long iters = arg_long(argc, argv, "--iterations", 10);
    double *a, *b, *c, *sum;
    HIP_CHECK(hipMalloc(&a, n * sizeof(double)));
    HIP_CHECK(hipMalloc(&b, n * sizeof(double)));
    HIP_CHECK(hipMalloc(&c, n * sizeof(double)));
    HIP_CHECK(hipHostMalloc(&sum, sizeof(double)));
    std::vector<double> ha(n, 0.1), hb(n, 0.2), hc(n, 0.0);
    HIP_CHECK(hipMemcpy(a, ha.data(), n * sizeof(double), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(b, hb.data(), n * sizeof(double), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(c, hc.data(), n * sizeof(double), hipMemcpyHostToDevice));
    const unsigned grid = blocks_for(n, BLOCK);
    for (long it = 0; it < iters; ++it) {
        *sum = 0.0;
        stream_copy<<<grid, BLOCK>>>(a, c, n);
        stream_mul<<<grid, BLOCK>>>(b, c, n);
        stream_add<<<grid, BLOCK>>>(a, b, c, n);
        stream_triad<<<grid, BLOCK>>>(a, b, c, n);
        stream_dot<<<256, BLOCK>>>(a, b, sum, n);
        HIP_CHECK(hipDeviceSynchronize());
    }
    double ea = 0.1, eb = 0.2, ec = 0.0;
    for (long it = 0; it < iters; ++it) { ec = ea; eb = SCALAR * ec; ec = ea + eb; ea = eb + SCALAR * ec; }
    HIP_CHECK(hipMemcpy(ha.data(), a, n * sizeof(double), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(hb.data(), b, n * sizeof(double), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(hc.data(), c, n * sizeof(double), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
        if (ha[i] != ea || hb[i] != eb || hc[i] != ec) {
            std::printf("result stream FAILED element %zu differs from the reference\n", i);
            return 1;
        }
    }
    const double es = ea * eb * double(n);
    if (iters > 0 && std::fabs(*sum - es) > 1e-8 * std::fabs(es)) {
        std::printf("result stream FAILED dot %.17g vs %.17g\n", *sum, es);
        return 1;
    }
    uint64_t h = FNV_OFFSET;
    h = fnv1a(h, ha.data(), n * sizeof(double));
    h = fnv1a(h, hb.data(), n * sizeof(double));
    h = fnv1a(h, hc.data(), n * sizeof(double));
    std::printf("result stream ok checksum=%016llx counter=0 dispatches=%ld\n", (unsigned long long)h, iters * 5);
    HIP_CHECK(hipFree(a)); HIP_CHECK(hipFree(b)); HIP_CHECK(hipFree(c)); HIP_CHECK(hipHostFree(sum));
    return 0;
}
