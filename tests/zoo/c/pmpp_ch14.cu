// PMPP 4th ed., chapter 14 (sparse matrix computation): SpMV with COO (§14.2), CSR (§14.3)
// and ELL (§14.4), written anew. The book passes a struct (COOMatrix, CSRMatrix, ELLMatrix);
// here its fields are the kernel's parameters, as in the blk twins.

__global__ void spmv_coo_kernel(int *rowIdx, int *colIdx, float *value, int numNonzeros, float *x, float *y) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numNonzeros) {
    unsigned int row = rowIdx[i];
    unsigned int col = colIdx[i];
    float v = value[i];
    atomicAdd(&y[row], x[col] * v);
  }
}

__global__ void spmv_csr_kernel(int *rowPtrs, int *colIdx, float *value, int numRows, float *x, float *y) {
  unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < numRows) {
    float sum = 0.0f;
    unsigned int rowStart = rowPtrs[row];
    unsigned int rowEnd = rowPtrs[row + 1];
    for (unsigned int i = rowStart; i < rowEnd; ++i) {
      unsigned int col = colIdx[i];
      sum += x[col] * value[i];
    }
    y[row] += sum;
  }
}

__global__ void spmv_ell_kernel(int *colIdx, float *value, int *nnzPerRow, int numRows, float *x, float *y) {
  unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < numRows) {
    float sum = 0.0f;
    int nnz = nnzPerRow[row];
    for (unsigned int t = 0; t < nnz; ++t) {
      unsigned int i = t * numRows + row;
      unsigned int col = colIdx[i];
      sum += x[col] * value[i];
    }
    y[row] = sum;
  }
}
