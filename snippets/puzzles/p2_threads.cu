// Puzzle skeletons in CUDA C: each section, named after its puzzle, is the kernel to edit,
// with the arguments and the launch of the Python skeleton. The solutions are in the
// file of the same name that ends in _solutions.cu.

// --8<-- [start:double]
__global__ void double_vector(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: every thread writes out[i] = 2 * a[i]
}
// --8<-- [end:double]

// --8<-- [start:guard]
__global__ void add(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // TODO: threads with no element must do nothing
    out[i] = a[i] + b[i];
}
// --8<-- [end:guard]

// --8<-- [start:add_bias]
__global__ void add_bias(const float *a, const float *bias, float *out, int M, int N)
{
    int row = threadIdx.y;  // TODO: the row and column of this thread in the whole grid
    int col = threadIdx.x;
    if (row < M && col < N) {
        out[row * N + col] = a[row * N + col] + bias[col];
    }
}
// --8<-- [end:add_bias]

// --8<-- [start:grid_stride]
__global__ void square(const float *a, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // TODO: a grid-stride loop over all n elements
    if (i < n) {
        float v = a[i];
        out[i] = v * v;
    }
}
// --8<-- [end:grid_stride]

// --8<-- [start:warp_sum]
__global__ void warp_sum(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    // TODO: add up the 32 values of the warp with __shfl_down_sync
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = v;
    }
}
// --8<-- [end:warp_sum]
