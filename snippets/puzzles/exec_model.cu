// Puzzle skeletons in CUDA C: each section, named after its puzzle, is the kernel to edit,
// with the arguments and the launch of the Python skeleton. The solutions are in the
// file of the same name that ends in _solutions.cu.

// --8<-- [start:warp_of]
__global__ void warp_of(int *warp, int *lane)
{
    int t = threadIdx.y * blockDim.x + threadIdx.x;  // the thread's number in its block: x fastest
    int g = blockIdx.x * (blockDim.x * blockDim.y) + t;  // one output per thread of the grid
    warp[g] = threadIdx.x / 32;  // TODO: the warp of this thread within its block
    lane[g] = threadIdx.x % 32;  // TODO: its lane
}
// --8<-- [end:warp_of]

// --8<-- [start:even_odd]
__global__ void even_odd(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    if (i % 2 == 0) {
        out[i] = 2.0f * v;
    } else {
        out[i] = v + 100.0f;
    }
}
// --8<-- [end:even_odd]

// --8<-- [start:signed]
__global__ void by_sign(const float *x, const int *order, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    if (v > 0.0f) {
        y[i] = sqrtf(fabsf(v));
    } else {
        y[i] = -v * v;
    }
}
// --8<-- [end:signed]

// --8<-- [start:copy4]
__global__ void copy4(const float *a, float *out)
{
    int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;  // 4 elements per thread
    for (int k = 0; k < 4; k++) {
        int i = base + k * blockDim.x;
        out[i] = a[i];
    }
}
// --8<-- [end:copy4]
