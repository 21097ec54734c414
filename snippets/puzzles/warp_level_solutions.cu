// One solution per puzzle in CUDA C (try first): the section <name>_solution answers
// the skeleton <name> of the file of the same name without _solutions.

// --8<-- [start:warp_scan_solution]
__global__ void warp_scan_solution(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    float v = x[i];
    for (int delta = 1; delta < 32; delta *= 2) {
        float up = __shfl_up_sync(0xffffffff, v, delta);
        if (lane >= delta) {
            v += up;
        }
    }
    out[i] = v;
}
// --8<-- [end:warp_scan_solution]

// --8<-- [start:warp_max_solution]
__global__ void warp_max_solution(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, lane_mask));
    }
    out[i] = v;
}
// --8<-- [end:warp_max_solution]

// --8<-- [start:compact_solution]
__global__ void compact_solution(const int *x, int *out, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = i / 32;
    int v = x[i];
    bool keep = v > 0;
    unsigned int lane = threadIdx.x % 32;
    unsigned int votes = __ballot_sync(0xffffffff, keep);
    int before = __popc(votes & ((1u << lane) - 1));  // the kept lanes below this one
    if (keep) {
        out[32 * w + before] = v;
    }
    if (lane == 0) {
        count[w] = __popc(votes);
    }
}
// --8<-- [end:compact_solution]

// --8<-- [start:histogram_solution]
__global__ void histogram_solution(const int *x, int *hist)
{
    __shared__ int local[32];  // one counter per bin
    int t = threadIdx.x;
    if (t < 32) {
        local[t] = 0;
    }
    __syncthreads();
    atomicAdd(&local[x[blockIdx.x * blockDim.x + t]], 1);
    __syncthreads();
    if (t < 32) {
        atomicAdd(&hist[t], local[t]);
    }
}
// --8<-- [end:histogram_solution]

// --8<-- [start:tail_sum_solution]
__global__ void tail_sum_solution(const float *x, float *out)
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
        __syncwarp();  // the lanes of a warp meet before the next step reads what they wrote
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
// --8<-- [end:tail_sum_solution]

// --8<-- [start:tickets_solution]
__global__ void tickets_solution(const int *flag, int *counter, int *ticket, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag[i] == 1) {
        int old = counter[0];
        while (true) {
            int seen = atomicCAS(&counter[0], old, (old + 1) % K);
            if (seen == old) {  // nobody updated the counter in between: ticket old is ours
                break;
            }
            old = seen;
        }
        ticket[i] = old;
    }
}
// --8<-- [end:tickets_solution]
