// eduardo4jesus/cuda-training-series exercises/hw8/task3 (fp64 transpose through shared memory), written anew.
#define INDX(row, col, ld) (((col) * (ld)) + (row))
#define THREADS_PER_BLOCK_X 32
#define THREADS_PER_BLOCK_Y 32

__global__ void smem_cuda_transpose(int m, double *a, double *c) {
  __shared__ double smemArray[THREADS_PER_BLOCK_X][THREADS_PER_BLOCK_Y + 1];
  int myRow = blockDim.x * blockIdx.x + threadIdx.x;
  int myCol = blockDim.y * blockIdx.y + threadIdx.y;
  int tileX = blockDim.x * blockIdx.x;
  int tileY = blockDim.y * blockIdx.y;

  if (myRow < m && myCol < m) {
    smemArray[threadIdx.x][threadIdx.y] = a[INDX(tileX + threadIdx.x, tileY + threadIdx.y, m)];
  }
  __syncthreads();
  if (myRow < m && myCol < m) {
    c[INDX(tileY + threadIdx.x, tileX + threadIdx.y, m)] = smemArray[threadIdx.y][threadIdx.x];
  }
}
