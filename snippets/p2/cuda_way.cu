// P2 §16's kernel in CUDA C: the page shows it, and its Python blocks compile this file with
// RawModule and launch it beside the per-thread Python and the masks.

// --8<-- [start:kernel]
__global__ void add_or_sub(const float* a, const float* b, float* c,
                           const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                 // bounds check
        const float x = a[i];
        const float y = b[i];
        if (i % 2 == 0)          // even threads add
            c[i] = x + y;
        else                     // odd threads subtract
            c[i] = x - y;
    }
}
// --8<-- [end:kernel]

// --8<-- [start:host]
void add_or_sub_on_the_gpu(const float* d_a, const float* d_b, float* d_c, const int n)
{
    const int threads = 256;
    // threads per block, and the number of blocks rounded up
    add_or_sub<<<(n + threads - 1) / threads, threads>>>(d_a, d_b, d_c, n);
}
// --8<-- [end:host]

// --8<-- [start:divide]
__global__ void divide(const int* a, const int* b, int* q, int* r, const int* x, long long* s)
{
    const int t = threadIdx.x;
    q[t] = a[t] / b[t];           // C's division truncates toward zero
    r[t] = a[t] % b[t];           // and the remainder takes the dividend's sign
    if (t == 0)
        s[0] = x[0] + x[0];       // int + int is an int: it wraps before it is widened
}
// --8<-- [end:divide]
