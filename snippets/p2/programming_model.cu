// The C kernels of P2 §3 and §4 (the programming-model page). Each page fence shows one
// section; the page's Python blocks compile this file with RawModule and launch them.

// --8<-- [start:vector_add]
__global__ void vector_add(const float* a, const float* b, float* c, const int n)
{
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;  // threads of earlier blocks + my index
    if (gid < n)                                            // bounds check: threads past n touch nothing
        c[gid] = a[gid] + b[gid];
}
// --8<-- [end:vector_add]

// --8<-- [start:vector_add_host]
void add_on_the_gpu(const float* d_a, const float* d_b, float* d_c, const int n)
{
    const int per_block = 256;                               // 256 threads per block
    const int num_blocks = (n + per_block - 1) / per_block;  // ⌈n / 256⌉ blocks
    vector_add<<<num_blocks, per_block>>>(d_a, d_b, d_c, n);
}
// --8<-- [end:vector_add_host]

// --8<-- [start:bias_add]
__global__ void bias_add(float* X, const float* bias, const int M, const int N)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;  // y runs along rows
    const int col = blockIdx.x * blockDim.x + threadIdx.x;  // x along columns: neighbours in x, neighbours in memory
    if (row < M && col < N)
        X[row * N + col] += bias[row];
}
// --8<-- [end:bias_add]

// --8<-- [start:bias_add_swapped]
__global__ void bias_add_swapped(float* X, const float* bias, const int M, const int N)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;  // x runs along rows: neighbours in x are N elements apart
    const int col = blockIdx.y * blockDim.y + threadIdx.y;  // y along columns
    if (row < M && col < N)
        X[row * N + col] += bias[row];
}
// --8<-- [end:bias_add_swapped]

// --8<-- [start:scale]
__global__ void scale(const float* x, float* y, const float alpha, const int n)
{
    const int stride = gridDim.x * blockDim.x;  // threads in the whole grid
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride)
        y[k] = alpha * x[k];
}
// --8<-- [end:scale]

// --8<-- [start:two_paths]
__device__ void path_a(const float* a, float* out, int t) { out[t] = a[t] + 1.0f; }  // path A: a load and a store
__device__ void path_b(const float* b, float* out, int t) { out[t] = b[t] - 1.0f; }  // path B: the same work on b

__global__ void two_paths(const float* a, const float* b, float* out)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 2 == 0)
        path_a(a, out, t);  // even-numbered threads
    else
        path_b(b, out, t);  // odd-numbered threads
}
// --8<-- [end:two_paths]

__global__ void two_paths_by_warp(const float* a, const float* b, float* out)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x / 32) % 2 == 0)  // whole warps agree
        path_a(a, out, t);
    else
        path_b(b, out, t);
}
