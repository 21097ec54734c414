// Puzzle skeletons in CUDA C: each section, named after its puzzle, is the kernel to edit,
// with the arguments and the launch of the Python skeleton. The solutions are in the
// file of the same name that ends in _solutions.cu.

// --8<-- [start:warp_scan]
__global__ void warp_scan(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    // TODO: v = x[i] plus the values of the lanes before this one in its warp
    out[i] = v;
}
// --8<-- [end:warp_scan]

// --8<-- [start:warp_max]
__global__ void warp_max(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int delta = 16; delta > 0; delta /= 2) {
        v = fmaxf(v, __shfl_down_sync(0xffffffff, v, delta));
    }
    out[i] = v;
}
// --8<-- [end:warp_max]

// --8<-- [start:compact]
__global__ void compact(const int *x, int *out, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = i / 32;
    int v = x[i];
    bool keep = v > 0;
    // TODO: pack the kept values at the front of out[32 * w:32 * w + 32], in order
    if (keep) {
        out[i] = v;
    }
}
// --8<-- [end:compact]

// --8<-- [start:histogram]
__global__ void histogram(const int *x, int *hist)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&hist[x[i]], 1);
}
// --8<-- [end:histogram]

// --8<-- [start:tail_sum]
__global__ void tail_sum(const float *x, float *out)
{
    __shared__ float sdata[256];
    int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    int s = blockDim.x / 2;
    for (; s > 16; s /= 2) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    for (; s > 0; s /= 2) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// --8<-- [end:tail_sum]

// --8<-- [start:tickets]
__global__ void tickets(const int *flag, int *counter, int *ticket, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag[i] == 1) {
        int old = counter[0];
        counter[0] = (old + 1) % K;
        ticket[i] = old;
    }
}
// --8<-- [end:tickets]
