// Wrong C answers to the P2 puzzles at warp level (tests/puzzles/test_c_puzzles.py).

__global__ void warp_scan_unguarded(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int delta = 1; delta < 32; delta *= 2) {
        v += __shfl_up_sync(0xffffffff, v, delta);
    }
    out[i] = v;
}

__global__ void warp_scan_one_step_short(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    float v = x[i];
    for (int delta = 1; delta < 16; delta *= 2) {
        float up = __shfl_up_sync(0xffffffff, v, delta);
        if (lane >= delta) {
            v += up;
        }
    }
    out[i] = v;
}

__global__ void warp_max_first_step_eight(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int lane_mask = 8; lane_mask > 0; lane_mask /= 2) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, lane_mask));
    }
    out[i] = v;
}

__global__ void warp_max_one_step_short(const float *x, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int lane_mask = 16; lane_mask > 1; lane_mask /= 2) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, lane_mask));
    }
    out[i] = v;
}

__global__ void compact_with_atomics(const int *x, int *out, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = i / 32;
    int v = x[i];
    if (v > 0) {
        int slot = atomicAdd(&count[w], 1);
        out[32 * w + slot] = v;
    }
}

__global__ void compact_counts_own_lane(const int *x, int *out, int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w = i / 32;
    int v = x[i];
    bool keep = v > 0;
    unsigned int lane = threadIdx.x % 32;
    unsigned int votes = __ballot_sync(0xffffffff, keep);
    int before = __popc(votes & ((2u << lane) - 1));
    if (keep) {
        out[32 * w + before] = v;
    }
    if (lane == 0) {
        count[w] = __popc(votes);
    }
}

__global__ void histogram_no_second_sync(const int *x, int *hist)
{
    __shared__ int local[32];
    int t = threadIdx.x;
    if (t < 32) {
        local[t] = 0;
    }
    __syncthreads();
    atomicAdd(&local[x[blockIdx.x * blockDim.x + t]], 1);
    if (t < 32) {
        atomicAdd(&hist[t], local[t]);
    }
}

__global__ void histogram_less_or_equal(const int *x, int *hist)
{
    __shared__ int local[32];
    int t = threadIdx.x;
    if (t <= 32) {
        local[t] = 0;
    }
    __syncthreads();
    atomicAdd(&local[x[blockIdx.x * blockDim.x + t]], 1);
    __syncthreads();
    if (t < 32) {
        atomicAdd(&hist[t], local[t]);
    }
}

__global__ void tail_sum_syncwarp_once(const float *x, float *out)
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
    __syncwarp();
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

__global__ void tail_sum_no_sync_in_first_loop(const float *x, float *out)
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
    }
    for (; s > 0; s /= 2) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncwarp();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}

__global__ void tickets_add_then_wrap(const int *flag, int *counter, int *ticket, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag[i] == 1) {
        int old = atomicAdd(&counter[0], 1);
        ticket[i] = old % K;
    }
}

__global__ void tickets_cas_once(const int *flag, int *counter, int *ticket, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag[i] == 1) {
        int old = counter[0];
        atomicCAS(&counter[0], old, (old + 1) % K);
        ticket[i] = old;
    }
}
