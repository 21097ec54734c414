// P2 §6.2's block-wide reversal through shared memory, in CUDA C, with and without its
// barrier: the page shows the first, and its Python block launches both.

// --8<-- [start:reverse]
__global__ void reverse(float* d)
{
    __shared__ float buf[256];
    const int t = threadIdx.x;
    buf[t] = d[t];
    __syncthreads();  // barrier: the element read below comes from another thread
    d[t] = buf[255 - t];
}
// --8<-- [end:reverse]

__global__ void reverse_unsynced(float* d)  // the same, with the barrier forgotten
{
    __shared__ float buf[256];
    const int t = threadIdx.x;
    buf[t] = d[t];
    d[t] = buf[255 - t];
}
