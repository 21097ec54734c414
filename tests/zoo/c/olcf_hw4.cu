// OLCF CUDA Training Series, exercises/hw4/matrix_sums_solution.cu, written anew.
__global__ void row_sums(const float *A, float *sums, size_t ds) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;  // one thread per row
  if (idx < ds) {
    float sum = 0.0f;
    for (size_t i = 0; i < ds; i++)
      sum += A[idx * ds + i];  // walks along the row
    sums[idx] = sum;
  }
}

__global__ void column_sums(const float *A, float *sums, size_t ds) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;  // one thread per column
  if (idx < ds) {
    float sum = 0.0f;
    for (size_t i = 0; i < ds; i++)
      sum += A[idx + ds * i];  // walks down the column
    sums[idx] = sum;
  }
}
