// Puzzle skeletons in CUDA C: each section, named after its puzzle, is the kernel to edit,
// with the arguments and the launch of the Python skeleton. The solutions are in the
// file of the same name that ends in _solutions.cu.

// --8<-- [start:window_sum]
__global__ void window_sum(const float *a, float *out, int n)
{
    __shared__ float tile[256 + 2];  // the block's elements and 2 more
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: fill the tile (with its halo), sync, then out[i] = tile[t] + tile[t+1] + tile[t+2]
}
// --8<-- [end:window_sum]

// --8<-- [start:reverse_blocks]
__global__ void reverse_blocks(const float *a, float *out)
{
    __shared__ float tile[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = a[i];
    out[i] = tile[blockDim.x - 1 - t];
}
// --8<-- [end:reverse_blocks]

// --8<-- [start:scale]
__global__ void scale(const float *A, float *B, int N)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    B[row * N + col] = 3.0f * A[row * N + col];
}
// --8<-- [end:scale]

// --8<-- [start:transpose]
__global__ void transpose(const float *A, float *B, int N)
{
    __shared__ float tile[32][32];
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
// --8<-- [end:transpose]

// --8<-- [start:pair_sum]
__global__ void pair_sum(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float left = a[2 * i];
    float right = a[2 * i + 1];
    out[i] = left + right;
}
// --8<-- [end:pair_sum]

// --8<-- [start:block_sum]
__global__ void block_sum(const float *x, float *out)
{
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// --8<-- [end:block_sum]
