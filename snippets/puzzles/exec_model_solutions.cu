// One solution per puzzle in CUDA C (try first): the section <name>_solution answers
// the skeleton <name> of the file of the same name without _solutions.

// --8<-- [start:warp_of_solution]
__global__ void warp_of_solution(int *warp, int *lane)
{
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int g = blockIdx.x * (blockDim.x * blockDim.y) + t;
    warp[g] = t / 32;  // warps are cut from the linear thread number
    lane[g] = t % 32;
}
// --8<-- [end:warp_of_solution]

// --8<-- [start:even_odd_solution]
__global__ void even_odd_solution(const float *a, float *out)
{
    int g = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // the warp's number in the grid
    int parity = g % 2;  // even warps take even elements, odd warps odd ones
    int i = 2 * (32 * (g / 2) + threadIdx.x % 32) + parity;
    float v = a[i];
    if (parity == 0) {  // the same for all 32 lanes of a warp
        out[i] = 2.0f * v;
    } else {
        out[i] = v + 100.0f;
    }
}
// --8<-- [end:even_odd_solution]

// --8<-- [start:signed_solution]
__global__ void by_sign_solution(const float *x, const int *order, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = order[i];  // the i-th element in sorted order: positives first
    float v = x[j];
    if (v > 0.0f) {
        y[j] = sqrtf(fabsf(v));
    } else {
        y[j] = -v * v;
    }
}
// --8<-- [end:signed_solution]

// --8<-- [start:copy4_solution]
__global__ void copy4_solution(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = reinterpret_cast<const float4 *>(a)[i];  // a float4: 16 bytes per lane in one instruction
    reinterpret_cast<float4 *>(out)[i] = v;
}
// --8<-- [end:copy4_solution]
