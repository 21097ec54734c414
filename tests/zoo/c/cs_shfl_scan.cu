// CUDA Samples, Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu: shfl_scan_test,
// written anew by the simtdocs team in the sample's style.
#include <stdio.h>

// an inclusive scan of each block: per warp with __shfl_up_sync, then the warp sums
__global__ void shfl_scan_test(int *data, int width, int *partial_sums = NULL) {
  extern __shared__ int sums[];
  int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
  int lane_id = id % warpSize;
  int warp_id = threadIdx.x / warpSize;  // the warp this thread is in

  int value = data[id];

  // scan within the warp
  for (int i = 1; i <= width; i *= 2) {
    unsigned int mask = 0xffffffff;
    int n = __shfl_up_sync(mask, value, i, width);
    if (lane_id >= i) value += n;
  }

  // the last lane of each warp holds the warp's sum
  if (threadIdx.x % warpSize == warpSize - 1) {
    sums[warp_id] = value;
  }
  __syncthreads();

  // warp 0 scans the warp sums
  if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
    int warp_sum = sums[lane_id];
    int mask = (1 << (blockDim.x / warpSize)) - 1;
    for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
      int n = __shfl_up_sync(mask, warp_sum, i, (blockDim.x / warpSize));
      if (lane_id >= i) warp_sum += n;
    }
    sums[lane_id] = warp_sum;
  }
  __syncthreads();

  // add the sums of the warps before this one
  int blockSum = 0;
  if (warp_id > 0) {
    blockSum = sums[warp_id - 1];
  }
  value += blockSum;
  data[id] = value;

  // the last thread writes the block's sum for the next level
  if (partial_sums != NULL && threadIdx.x == blockDim.x - 1) {
    partial_sums[blockIdx.x] = value;
  }
}
