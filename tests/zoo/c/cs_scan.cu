// CUDA Samples, Samples/2_Concepts_and_Techniques/scan/scan.cu: scanExclusiveShared and its
// device functions, written anew by the simtdocs team in the sample's style.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

typedef unsigned int uint;
#define THREADBLOCK_SIZE 256

// a naive inclusive scan of size elements (size a power of 2) over the block
inline __device__ uint scan1Inclusive(uint idata, volatile uint *s_Data, uint size, cg::thread_block cta) {
  uint pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
  s_Data[pos] = 0;  // a zero below each segment: no thread tests pos >= offset
  pos += size;
  s_Data[pos] = idata;

  for (uint offset = 1; offset < size; offset <<= 1) {
    cg::sync(cta);
    uint t = s_Data[pos] + s_Data[pos - offset];
    cg::sync(cta);
    s_Data[pos] = t;
  }

  return s_Data[pos];
}

inline __device__ uint scan1Exclusive(uint idata, volatile uint *s_Data, uint size, cg::thread_block cta) {
  return scan1Inclusive(idata, s_Data, size, cta) - idata;
}

inline __device__ uint4 scan4Inclusive(uint4 idata4, volatile uint *s_Data, uint size, cg::thread_block cta) {
  // the thread's own four elements first
  idata4.y += idata4.x;
  idata4.z += idata4.y;
  idata4.w += idata4.z;

  // then the exclusive scan of the threads' totals
  uint oval = scan1Exclusive(idata4.w, s_Data, size / 4, cta);

  idata4.x += oval;
  idata4.y += oval;
  idata4.z += oval;
  idata4.w += oval;

  return idata4;
}

inline __device__ uint4 scan4Exclusive(uint4 idata4, volatile uint *s_Data, uint size, cg::thread_block cta) {
  uint4 odata4 = scan4Inclusive(idata4, s_Data, size, cta);
  odata4.x -= idata4.x;
  odata4.y -= idata4.y;
  odata4.z -= idata4.z;
  odata4.w -= idata4.w;
  return odata4;
}

__global__ void scanExclusiveShared(uint4 *d_Dst, uint4 *d_Src, uint size) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ uint s_Data[2 * THREADBLOCK_SIZE];

  uint pos = blockIdx.x * blockDim.x + threadIdx.x;

  // load data
  uint4 idata4 = d_Src[pos];

  // calculate exclusive scan
  uint4 odata4 = scan4Exclusive(idata4, s_Data, size, cta);

  // write back
  d_Dst[pos] = odata4;
}
