// eduardo4jesus/cuda-training-series exercises/hw8/task1/task1.cu (naive fp64 transpose), written anew.
#define INDX(row, col, ld) (((col) * (ld)) + (row))

__global__ void naive_cuda_transpose(int m, double *a, double *c) {
  int myRow = blockDim.x * blockIdx.x + threadIdx.x;
  int myCol = blockDim.y * blockIdx.y + threadIdx.y;
  if (myRow < m && myCol < m)
    c[INDX(myRow, myCol, m)] = a[INDX(myCol, myRow, m)];
}
