// PMPP 4th ed. (Hwu, Kirk, El Hajj), chapter 7 (convolution): Figs. 7.7, 7.9 and 7.12,
// written anew by the simtdocs team in the book's style (not the book's text).
#define FILTER_RADIUS 1
#define IN_TILE_DIM 16
#define OUT_TILE_DIM ((IN_TILE_DIM) - 2 * (FILTER_RADIUS))

__constant__ float F_c[2 * FILTER_RADIUS + 1][2 * FILTER_RADIUS + 1];

// Fig. 7.7: the filter in global memory, row-major (2r+1) x (2r+1)
__global__ void convolution_2D_basic_kernel(float *N, float *F, float *P, int r, int width, int height) {
  int outCol = blockIdx.x * blockDim.x + threadIdx.x;
  int outRow = blockIdx.y * blockDim.y + threadIdx.y;
  float Pvalue = 0.0f;
  for (int fRow = 0; fRow < 2 * r + 1; fRow++) {
    for (int fCol = 0; fCol < 2 * r + 1; fCol++) {
      int inRow = outRow - r + fRow;
      int inCol = outCol - r + fCol;
      if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
        Pvalue += F[fRow * (2 * r + 1) + fCol] * N[inRow * width + inCol];
      }
    }
  }
  P[outRow * width + outCol] = Pvalue;
}

// Fig. 7.9: the filter in constant memory
__global__ void convolution_2D_const_mem_kernel(float *N, float *P, int r, int width, int height) {
  int outCol = blockIdx.x * blockDim.x + threadIdx.x;
  int outRow = blockIdx.y * blockDim.y + threadIdx.y;
  float Pvalue = 0.0f;
  for (int fRow = 0; fRow < 2 * r + 1; fRow++) {
    for (int fCol = 0; fCol < 2 * r + 1; fCol++) {
      int inRow = outRow - r + fRow;
      int inCol = outCol - r + fCol;
      if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
        Pvalue += F_c[fRow][fCol] * N[inRow * width + inCol];
      }
    }
  }
  P[outRow * width + outCol] = Pvalue;
}

// Fig. 7.12: input tiles with their halo in shared memory; the inner threads compute
__global__ void convolution_tiled_2D_const_mem_kernel(float *N, float *P, int width, int height) {
  int col = blockIdx.x * OUT_TILE_DIM + threadIdx.x - FILTER_RADIUS;
  int row = blockIdx.y * OUT_TILE_DIM + threadIdx.y - FILTER_RADIUS;
  // loading the input tile
  __shared__ float N_s[IN_TILE_DIM][IN_TILE_DIM];
  if (row >= 0 && row < height && col >= 0 && col < width) {
    N_s[threadIdx.y][threadIdx.x] = N[row * width + col];
  } else {
    N_s[threadIdx.y][threadIdx.x] = 0.0;
  }
  __syncthreads();
  // calculating output elements
  int tileCol = threadIdx.x - FILTER_RADIUS;
  int tileRow = threadIdx.y - FILTER_RADIUS;
  // turning off the threads at the edges of the block
  if (col >= 0 && col < width && row >= 0 && row < height) {
    if (tileCol >= 0 && tileCol < OUT_TILE_DIM && tileRow >= 0 && tileRow < OUT_TILE_DIM) {
      float Pvalue = 0.0f;
      for (int fRow = 0; fRow < 2 * FILTER_RADIUS + 1; fRow++) {
        for (int fCol = 0; fCol < 2 * FILTER_RADIUS + 1; fCol++) {
          Pvalue += F_c[fRow][fCol] * N_s[tileRow + fRow][tileCol + fCol];
        }
      }
      P[row * width + col] = Pvalue;
    }
  }
}
