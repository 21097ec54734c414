// PMPP 4th ed., chapter 9 (parallel histogram): Figs. 9.6 and 9.10, written anew.
#define NUM_BINS 7

// Fig. 9.6: letters counted in bins of four, atomics on global memory
__global__ void histo_kernel(char *data, unsigned int length, unsigned int *histo) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < length) {
    int alphabet_position = data[i] - 'a';
    if (alphabet_position >= 0 && alphabet_position < 26) {
      atomicAdd(&(histo[alphabet_position / 4]), 1);
    }
  }
}

// Fig. 9.10: a private histogram per block in shared memory
__global__ void histo_private_kernel(char *data, unsigned int length, unsigned int *histo) {
  // initialize privatized bins
  __shared__ unsigned int histo_s[NUM_BINS];
  for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
    histo_s[bin] = 0u;
  }
  __syncthreads();
  // histogram
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < length) {
    int alphabet_position = data[i] - 'a';
    if (alphabet_position >= 0 && alphabet_position < 26) {
      atomicAdd(&(histo_s[alphabet_position / 4]), 1);
    }
  }
  __syncthreads();
  // commit to global memory
  for (unsigned int bin = threadIdx.x; bin < NUM_BINS; bin += blockDim.x) {
    unsigned int binValue = histo_s[bin];
    if (binValue > 0) {
      atomicAdd(&(histo[bin]), binValue);
    }
  }
}
