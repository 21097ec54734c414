// OLCF CUDA Training Series, exercises/hw2/matrix_mul_shared_solution.cu, written anew.
const int block_size = 32;

__global__ void mmul(const float *A, const float *B, float *C, int ds) {
  __shared__ float As[block_size][block_size];
  __shared__ float Bs[block_size][block_size];
  int idx = threadIdx.x + blockDim.x * blockIdx.x;
  int idy = threadIdx.y + blockDim.y * blockIdx.y;
  if ((idx < ds) && (idy < ds)) {
    float temp = 0;
    for (int i = 0; i < ds / block_size; i++) {
      // load one tile of A and one of B
      As[threadIdx.y][threadIdx.x] = A[idy * ds + (i * block_size + threadIdx.x)];
      Bs[threadIdx.y][threadIdx.x] = B[(i * block_size + threadIdx.y) * ds + idx];
      __syncthreads();
      // the tile's contribution to C
      for (int k = 0; k < block_size; k++)
        temp += As[threadIdx.y][k] * Bs[k][threadIdx.x];
      __syncthreads();
    }
    C[idy * ds + idx] = temp;
  }
}
