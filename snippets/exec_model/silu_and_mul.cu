// The exec-model lecture's sketch of vLLM's silu_and_mul (not vLLM's code: its type dispatch
// and vectorised path are left out). The page shows the kernel and the host code; its Python
// block compiles this file with RawModule and launches the kernel.
#include <algorithm>
#include <cuda_fp16.h>

// --8<-- [start:kernel]
__global__ void silu_and_mul_sketch(__half* out, const __half* in, const int d)
{
    const long token = blockIdx.x;                       // one block per token
    const __half* row = in + token * 2 * d;              // [gate | up] of this token
    for (int i = threadIdx.x; i < d; i += blockDim.x) {  // stride = block size
        const float x = __half2float(row[i]);            // 2-byte elements, arithmetic in float
        const float y = __half2float(row[d + i]);
        out[token * d + i] = __float2half(x / (1.0f + expf(-x)) * y);  // silu(x) * y
    }
}
// --8<-- [end:kernel]

// --8<-- [start:host]
void silu_and_mul(__half* out, const __half* in, const int d, const int num_tokens)
{
    dim3 grid(num_tokens);          // blocks = tokens
    dim3 block(std::min(d, 1024));  // threads per block, capped at 1024
    silu_and_mul_sketch<<<grid, block>>>(out, in, d);
}
// --8<-- [end:host]
