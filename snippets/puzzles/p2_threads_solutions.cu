// One solution per puzzle in CUDA C (try first): the section <name>_solution answers
// the skeleton <name> of the file of the same name without _solutions.

// --8<-- [start:double_solution]
__global__ void double_vector_solution(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * a[i];
}
// --8<-- [end:double_solution]

// --8<-- [start:guard_solution]
__global__ void add_solution(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}
// --8<-- [end:guard_solution]

// --8<-- [start:add_bias_solution]
__global__ void add_bias_solution(const float *a, const float *bias, float *out, int M, int N)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        out[row * N + col] = a[row * N + col] + bias[col];
    }
}
// --8<-- [end:add_bias_solution]

// --8<-- [start:grid_stride_solution]
__global__ void square_solution(const float *a, float *out, int n)
{
    int stride = gridDim.x * blockDim.x;  // all threads of the grid
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = a[i];
        out[i] = v * v;
    }
}
// --8<-- [end:grid_stride_solution]

// --8<-- [start:warp_sum_solution]
__global__ void warp_sum_solution(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int delta = 16; delta > 0; delta /= 2) {  // lane l adds the value of lane l + delta
        v += __shfl_down_sync(0xffffffff, v, delta);
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = v;
    }
}
// --8<-- [end:warp_sum_solution]
