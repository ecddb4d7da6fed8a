// Five small kernels of known work, for binary reports small enough to commit
// (tests/data/ncurep/): FP32 FMA, FP64 FMA, FP16 half2 FMA, a tensor-core tile product (WMMA,
// fp16 in, fp32 out) and a copy, two of them inside NVTX push/pop ranges.
// nvcc -O2 -arch=sm_90 -lineinfo -o kernels tools/device/kernels.cu
#include <cuda_fp16.h>
#include <mma.h>
#include <nvtx3/nvToolsExt.h>
#include <cstdio>

using namespace nvcuda;

__global__ void fma32(float *x, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; for (int r = 0; r < reps; ++r) v = fmaf(v, 1.0001f, 0.5f); x[i] = v; }
}
__global__ void fma64(double *x, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { double v = x[i]; for (int r = 0; r < reps; ++r) v = fma(v, 1.0001, 0.5); x[i] = v; }
}
__global__ void hfma2(__half2 *x, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { __half2 v = x[i]; __half2 a = __float2half2_rn(1.0f), b = __float2half2_rn(0.001f);
    for (int r = 0; r < reps; ++r) v = __hfma2(v, a, b); x[i] = v; }
}
__global__ void tiles(const half *a, const half *b, float *c, int tiles_n) {
  int t = blockIdx.x;  // one 16x16x16 product per warp, repeated
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  for (int r = 0; r < 256; ++r) wmma::mma_sync(fc, fa, fb, fc);
  if (t < tiles_n) wmma::store_matrix_sync(c + 256 * t, fc, 16, wmma::mem_row_major);
}
__global__ void copy(const float4 *in, float4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

int main() {
  const int n = 1 << 22, reps = 64;
  float *x32; double *x64; __half2 *x16; half *a, *b; float *c; float4 *in, *out;
  cudaMalloc(&x32, n * 4); cudaMalloc(&x64, n * 8); cudaMalloc(&x16, n * 4);
  cudaMalloc(&a, 512); cudaMalloc(&b, 512); cudaMalloc(&c, 1024 * 1024 * 4);
  cudaMalloc(&in, n * 16); cudaMalloc(&out, n * 16);
  cudaMemset(x32, 0, n * 4); cudaMemset(x64, 0, n * 8); cudaMemset(x16, 0, n * 4);
  cudaMemset(a, 0, 512); cudaMemset(b, 0, 512); cudaMemset(in, 0, n * 16);
  nvtxRangePushA("step");
  nvtxRangePushA("compute");
  fma32<<<n / 256, 256>>>(x32, n, reps);
  fma64<<<n / 256, 256>>>(x64, n, reps);
  nvtxRangePop();
  hfma2<<<n / 256, 256>>>(x16, n, reps);
  tiles<<<1024, 32>>>(a, b, c, 1024);
  nvtxRangePop();
  copy<<<n / 256, 256>>>(in, out, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("kernels: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
