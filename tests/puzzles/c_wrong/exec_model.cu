// Wrong C answers to the execution model's puzzles (tests/puzzles/test_c_puzzles.py).

__global__ void warp_of_lane_from_x(int *warp, int *lane)
{
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int g = blockIdx.x * (blockDim.x * blockDim.y) + t;
    warp[g] = t / 32;
    lane[g] = threadIdx.x % 32;
}

__global__ void warp_of_one_past(int *warp, int *lane)
{
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int g = blockIdx.x * (blockDim.x * blockDim.y) + t + 1;
    warp[g] = t / 32;
    lane[g] = t % 32;
}

__global__ void even_odd_pairs_not_halved(const float *a, float *out)
{
    int g = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int parity = g % 2;
    int i = 2 * (32 * g + threadIdx.x % 32) + parity;
    float v = a[i];
    if (parity == 0) {
        out[i] = 2.0f * v;
    } else {
        out[i] = v + 100.0f;
    }
}

__global__ void even_odd_branch_on_warp_only(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    if ((threadIdx.x / 32) % 2 == 0) {
        out[i] = 2.0f * v;
    } else {
        out[i] = v + 100.0f;
    }
}

__global__ void signed_stored_in_order(const float *x, const int *order, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = order[i];
    float v = x[j];
    if (v > 0.0f) {
        y[i] = sqrtf(fabsf(v));
    } else {
        y[i] = -v * v;
    }
}

__global__ void signed_next_in_order(const float *x, const int *order, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = order[i + 1];
    float v = x[j];
    if (v > 0.0f) {
        y[j] = sqrtf(fabsf(v));
    } else {
        y[j] = -v * v;
    }
}

__global__ void copy4_float4_index_times_four(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = reinterpret_cast<const float4 *>(a)[4 * i];
    reinterpret_cast<float4 *>(out)[4 * i] = v;
}

__global__ void copy4_two_float2(const float *a, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 2; k++) {
        float2 v = reinterpret_cast<const float2 *>(a)[2 * i + k];
        reinterpret_cast<float2 *>(out)[2 * i + k] = v;
    }
}
