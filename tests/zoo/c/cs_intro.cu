// CUDA Samples, Samples/0_Introduction: vectorAdd, matrixMul, simpleAtomicIntrinsics and
// simpleVoteIntrinsics kernels, written anew by the simtdocs team in the samples' style.
#include <cuda_runtime.h>

// vectorAdd/vectorAdd.cu
__global__ void vectorAdd(const float *A, const float *B, float *C, int numElements) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;

  if (i < numElements) {
    C[i] = A[i] + B[i] + 0.0f;
  }
}

// matrixMul/matrixMul.cu: C = A * B with BLOCK_SIZE x BLOCK_SIZE tiles in shared memory
template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB) {
  int bx = blockIdx.x;
  int by = blockIdx.y;
  int tx = threadIdx.x;
  int ty = threadIdx.y;

  int aBegin = wA * BLOCK_SIZE * by;  // first sub-matrix of A this block reads
  int aEnd = aBegin + wA - 1;         // and the last
  int aStep = BLOCK_SIZE;
  int bBegin = BLOCK_SIZE * bx;
  int bStep = BLOCK_SIZE * wB;

  float Csub = 0;

  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];

    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();

#pragma unroll
    for (int k = 0; k < BLOCK_SIZE; ++k) {
      Csub += As[ty][k] * Bs[k][tx];
    }
    __syncthreads();
  }

  int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
  C[c + wB * ty + tx] = Csub;
}

// simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh, the six atomics the blk twin has
// (the sample goes on with atomicInc, atomicDec, atomicAnd, atomicOr and atomicXor on g_odata[5,6,8,9,10])
__global__ void testKernel(int *g_odata) {
  const unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;

  atomicAdd(&g_odata[0], 10);
  atomicSub(&g_odata[1], 10);
  atomicExch(&g_odata[2], tid);
  atomicMax(&g_odata[3], tid);
  atomicMin(&g_odata[4], tid);
  atomicCAS(&g_odata[7], tid - 1, tid);
}

// simpleVoteIntrinsics/simpleVote_kernel.cuh
__global__ void VoteAnyKernel1(unsigned int *input, unsigned int *result, int size) {
  int tx = threadIdx.x;
  int mask = 0xffffffff;
  result[tx] = __any_sync(mask, input[tx]);
}

__global__ void VoteAllKernel2(unsigned int *input, unsigned int *result, int size) {
  int tx = threadIdx.x;
  int mask = 0xffffffff;
  result[tx] = __all_sync(mask, input[tx]);
}

__global__ void VoteAnyKernel3(bool *info, int warp_size) {
  int tx = threadIdx.x;
  unsigned int mask = 0xffffffff;
  bool *offs = info + (tx * 3);

  // any and all of a predicate over the warp, and the predicate
  *offs = __any_sync(mask, (tx >= (warp_size * 3) / 2));
  *(offs + 1) = (tx >= (warp_size * 3) / 2 ? true : false);

  if (__all_sync(mask, (tx >= (warp_size * 3) / 2) ? true : false)) {
    *(offs + 2) = true;
  }
}
