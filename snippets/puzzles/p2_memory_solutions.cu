// One solution per puzzle in CUDA C (try first): the section <name>_solution answers
// the skeleton <name> of the file of the same name without _solutions.

// --8<-- [start:window_sum_solution]
__global__ void window_sum_solution(const float *a, float *out, int n)
{
    __shared__ float tile[256 + 2];  // the block's elements and 2 more
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x;
    tile[t] = a[i];
    if (t < 2) {  // threads 0 and 1 also fetch the 2 elements after the block
        tile[t + blockDim.x] = (i + blockDim.x < n) ? a[i + blockDim.x] : 0.0f;
    }
    __syncthreads();
    out[i] = tile[t] + tile[t + 1] + tile[t + 2];
}
// --8<-- [end:window_sum_solution]

// --8<-- [start:reverse_blocks_solution]
__global__ void reverse_blocks_solution(const float *a, float *out)
{
    __shared__ float tile[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = a[i];
    __syncthreads();  // every warp's part of the tile is in before anyone reads it
    out[i] = tile[blockDim.x - 1 - t];
}
// --8<-- [end:reverse_blocks_solution]

// --8<-- [start:scale_solution]
__global__ void scale_solution(const float *A, float *B, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring lanes, neighbouring columns
    B[row * N + col] = 3.0f * A[row * N + col];
}
// --8<-- [end:scale_solution]

// --8<-- [start:transpose_solution]
__global__ void transpose_solution(const float *A, float *B, int N)
{
    __shared__ float tile[32][33];  // one padding column
    int x = blockIdx.x * 32 + threadIdx.x;  // blocks of 32×8 threads move 32×32 tiles
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        tile[threadIdx.y + j][threadIdx.x] = A[(y + j) * N + x];
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        B[(y + j) * N + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
// --8<-- [end:transpose_solution]

// --8<-- [start:pair_sum_solution]
__global__ void pair_sum_solution(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 pair = reinterpret_cast<const float2 *>(a)[i];  // a float2: 8 bytes per lane, 256 bytes per warp
    out[i] = pair.x + pair.y;
}
// --8<-- [end:pair_sum_solution]

// --8<-- [start:block_sum_solution]
__global__ void block_sum_solution(const float *x, float *out)
{
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) {  // the first s threads add the upper half onto the lower half
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// --8<-- [end:block_sum_solution]
