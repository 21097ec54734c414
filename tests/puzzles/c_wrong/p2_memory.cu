// Wrong C answers to the P2 puzzles on memory (tests/puzzles/test_c_puzzles.py).

__global__ void window_sum_no_sync(const float *a, float *out, int n)
{
    __shared__ float tile[256 + 2];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x;
    tile[t] = a[i];
    if (t < 2) {
        tile[t + blockDim.x] = (i + blockDim.x < n) ? a[i + blockDim.x] : 0.0f;
    }
    out[i] = tile[t] + tile[t + 1] + tile[t + 2];
}

__global__ void window_sum_halo_less_or_equal(const float *a, float *out, int n)
{
    __shared__ float tile[256 + 2];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x;
    tile[t] = a[i];
    if (t < 2) {
        tile[t + blockDim.x] = (i + blockDim.x <= n) ? a[i + blockDim.x] : 0.0f;
    }
    __syncthreads();
    out[i] = tile[t] + tile[t + 1] + tile[t + 2];
}

__global__ void reverse_blocks_sync_in_if(const float *a, float *out)
{
    __shared__ float tile[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = a[i];
    if (t < 128) {
        __syncthreads();
    }
    out[i] = tile[blockDim.x - 1 - t];
}

__global__ void reverse_blocks_off_by_one(const float *a, float *out)
{
    __shared__ float tile[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = a[i];
    __syncthreads();
    out[i] = tile[blockDim.x - t];
}

__global__ void scale_transposed_store(const float *A, float *B, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    B[col * N + row] = 3.0f * A[row * N + col];
}

__global__ void scale_row_from_x_size(const float *A, float *B, int N)
{
    int row = blockIdx.y * blockDim.x + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    B[row * N + col] = 3.0f * A[row * N + col];
}

__global__ void transpose_pad_two(const float *A, float *B, int N)
{
    __shared__ float tile[32][34];
    int x = blockIdx.x * 32 + threadIdx.x;
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

__global__ void transpose_no_sync(const float *A, float *B, int N)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        tile[threadIdx.y + j][threadIdx.x] = A[(y + j) * N + x];
    }
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) {
        B[(y + j) * N + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void pair_sum_float2_index_doubled(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 pair = reinterpret_cast<const float2 *>(a)[2 * i];
    out[i] = pair.x + pair.y;
}

__global__ void pair_sum_left_twice(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 pair = reinterpret_cast<const float2 *>(a)[i];
    out[i] = pair.x + pair.x;
}

__global__ void block_sum_no_sync_in_loop(const float *x, float *out)
{
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

__global__ void block_sum_less_or_equal(const float *x, float *out)
{
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid <= s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
