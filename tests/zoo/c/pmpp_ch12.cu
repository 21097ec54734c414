// PMPP 4th ed., chapter 12 (merge): the co-rank function (§12.4), the sequential merge and
// the basic parallel merge kernel (§12.5), written anew.

__device__ void merge_sequential(int *A, int m, int *B, int n, int *C) {
  int i = 0;  // index into A
  int j = 0;  // index into B
  int k = 0;  // index into C
  while ((i < m) && (j < n)) {  // handle the start of A[] and B[]
    if (A[i] <= B[j]) {
      C[k++] = A[i++];
    } else {
      C[k++] = B[j++];
    }
  }
  if (i == m) {  // done with A[]: handle the remaining B[]
    while (j < n) {
      C[k++] = B[j++];
    }
  } else {  // done with B[]: handle the remaining A[]
    while (i < m) {
      C[k++] = A[i++];
    }
  }
}

__device__ int co_rank(int k, int *A, int m, int *B, int n) {
  int i = k < m ? k : m;  // i = min(k, m)
  int j = k - i;
  int i_low = 0 > (k - n) ? 0 : k - n;  // i_low = max(0, k - n)
  int j_low = 0 > (k - m) ? 0 : k - m;  // j_low = max(0, k - m)
  int delta;
  bool active = true;
  while (active) {
    if (i > 0 && j < n && A[i - 1] > B[j]) {
      delta = ((i - i_low + 1) >> 1);  // ceil((i - i_low) / 2)
      j_low = j;
      j = j + delta;
      i = i - delta;
    } else if (j > 0 && i < m && B[j - 1] >= A[i]) {
      delta = ((j - j_low + 1) >> 1);
      i_low = i;
      i = i + delta;
      j = j - delta;
    } else {
      active = false;
    }
  }
  return i;
}

__global__ void merge_basic_kernel(int *A, int m, int *B, int n, int *C) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int elementsPerThread = ceilf((m + n) / (blockDim.x * gridDim.x));  // integer division first, as the book writes it
  int k_curr = tid * elementsPerThread;  // start output index
  int k_next = min((tid + 1) * elementsPerThread, m + n);  // end output index
  int i_curr = co_rank(k_curr, A, m, B, n);
  int i_next = co_rank(k_next, A, m, B, n);
  int j_curr = k_curr - i_curr;
  int j_next = k_next - i_next;
  merge_sequential(&A[i_curr], i_next - i_curr, &B[j_curr], j_next - j_curr, &C[k_curr]);
}
