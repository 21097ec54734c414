// PMPP 4th ed., chapter 10 (reduction): Figs. 10.6, 10.9, 10.11 and 10.15, written anew.
#define BLOCK_DIM 256
#define COARSE_BLOCK_DIM 64
#define COARSE_FACTOR 2

// Fig. 10.6: in place in global memory, the owners of even elements add
__global__ void SimpleSumReductionKernel(float *input, float *output) {
  unsigned int i = 2 * threadIdx.x;
  for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
    if (threadIdx.x % stride == 0) {
      input[i] += input[i + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *output = input[0];
  }
}

// Fig. 10.9: the active threads stay contiguous
__global__ void ConvergentSumReductionKernel(float *input, float *output) {
  unsigned int i = threadIdx.x;
  for (unsigned int stride = blockDim.x; stride >= 1; stride /= 2) {
    if (threadIdx.x < stride) {
      input[i] += input[i + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *output = input[0];
  }
}

// Fig. 10.11: the first add while loading, the rest in shared memory
__global__ void SharedMemorySumReductionKernel(float *input, float *output) {
  __shared__ float input_s[BLOCK_DIM];
  unsigned int t = threadIdx.x;
  input_s[t] = input[t] + input[t + BLOCK_DIM];
  for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (threadIdx.x < stride) {
      input_s[t] += input_s[t + stride];
    }
  }
  if (threadIdx.x == 0) {
    *output = input_s[0];
  }
}

// Fig. 10.15: thread coarsening, one atomicAdd per block (the book's BLOCK_DIM: 64 here)
__global__ void CoarsenedSumReductionKernel(float *input, float *output) {
  __shared__ float input_s[COARSE_BLOCK_DIM];
  unsigned int segment = COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
  unsigned int i = segment + threadIdx.x;
  unsigned int t = threadIdx.x;
  float sum = input[i];
  for (unsigned int tile = 1; tile < COARSE_FACTOR * 2; ++tile) {
    sum += input[i + tile * COARSE_BLOCK_DIM];
  }
  input_s[t] = sum;
  for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (t < stride) {
      input_s[t] += input_s[t + stride];
    }
  }
  if (t == 0) {
    atomicAdd(output, input_s[0]);
  }
}
