// OLCF CUDA Training Series, exercises/hw1 (vector_add_solution.cu, matrix_mul_solution.cu):
// the kernels written anew by the simtdocs team in the exercises' style (not the exercises' text).
#include <stdio.h>

// vector add: C = A + B
__global__ void vadd(const float *A, const float *B, float *C, int ds) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;  // one thread per element
  if (idx < ds)
    C[idx] = A[idx] + B[idx];
}

// naive matrix multiply: C = A * B, square ds x ds, row-major
__global__ void mmul(const float *A, const float *B, float *C, int ds) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;  // column
  int idy = threadIdx.y + blockDim.y * blockIdx.y;  // row
  if ((idx < ds) && (idy < ds)) {
    float temp = 0;
    for (int i = 0; i < ds; i++)
      temp += A[idy * ds + i] * B[i * ds + idx];  // a row of A times a column of B
    C[idy * ds + idx] = temp;
  }
}
