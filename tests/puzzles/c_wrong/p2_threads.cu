// Wrong C answers to the P2 puzzles on threads and indices (tests/puzzles/test_c_puzzles.py):
// each kernel is named after its puzzle and its mistake, and check() must name the line given
// in the test.

__global__ void double_read_next(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * a[i + 1];
}

__global__ void double_block_stride_twice(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    out[i] = 2.0f * a[i];
}

__global__ void guard_less_or_equal(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        out[i] = a[i] + b[i];
    }
}

__global__ void guard_store_only(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = a[i] + b[i];
    if (i < n) {
        out[i] = sum;
    }
}

__global__ void add_bias_row_less_or_equal(const float *a, const float *bias, float *out, int M, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row <= M && col < N) {
        out[row * N + col] = a[row * N + col] + bias[col];
    }
}

__global__ void add_bias_column_major(const float *a, const float *bias, float *out, int M, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        out[row * N + col] = a[col * M + row] + bias[col];
    }
}

__global__ void grid_stride_less_or_equal(const float *a, float *out, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += stride) {
        float v = a[i];
        out[i] = v * v;
    }
}

__global__ void grid_stride_chunks(const float *a, float *out, int n)
{
    int threads = gridDim.x * blockDim.x;
    int per = (n + threads - 1) / threads;  // each thread its own chunk of consecutive elements
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * per;
    for (int i = first; i < first + per && i < n; i++) {
        float v = a[i];
        out[i] = v * v;
    }
}

__global__ void warp_sum_one_step_short(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int delta = 16; delta > 1; delta /= 2) {
        v += __shfl_down_sync(0xffffffff, v, delta);
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = v;
    }
}

__global__ void warp_sum_stored_at_i(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int delta = 16; delta > 0; delta /= 2) {
        v += __shfl_down_sync(0xffffffff, v, delta);
    }
    if (threadIdx.x % 32 == 0) {
        out[i] = v;
    }
}
