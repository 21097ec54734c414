// P2 §5.3's transpose through shared memory, in CUDA C: the page shows the kernel, and its
// Python block compiles this file with RawModule and launches all three tiled versions.

// --8<-- [start:tiled]
constexpr int TILE = 32, ROWS = 8;  // 32×8 threads move one 32×32 tile

__global__ void transpose_tiled(const float* A, float* B, const int N)
{
    __shared__ float tile[TILE][TILE];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)          // ① read a tile of A by rows (coalesced)
        tile[threadIdx.y + k][threadIdx.x] = A[(row + k) * N + col];
    __syncthreads();                              // ② wait until the whole tile is in
    col = blockIdx.y * TILE + threadIdx.x;        // ③ move to the transposed tile's place in B
    row = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)          //    read the tile by columns, write B by rows (coalesced)
        B[(row + k) * N + col] = tile[threadIdx.x][threadIdx.y + k];
}
// --8<-- [end:tiled]

// The same kernel with one element of padding per row (no bank conflicts) ...
__global__ void transpose_padded(const float* A, float* B, const int N)
{
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        tile[threadIdx.y + k][threadIdx.x] = A[(row + k) * N + col];
    __syncthreads();
    col = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        B[(row + k) * N + col] = tile[threadIdx.x][threadIdx.y + k];
}

// ... and padded, with the barrier left out (a race)
__global__ void transpose_unsynced(const float* A, float* B, const int N)
{
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        tile[threadIdx.y + k][threadIdx.x] = A[(row + k) * N + col];
    col = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        B[(row + k) * N + col] = tile[threadIdx.x][threadIdx.y + k];
}
