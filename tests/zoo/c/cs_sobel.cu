// CUDA Samples, Samples/5_Domain_Specific/SobelFilter/SobelFilter_kernels.cu: SobelTex and
// ComputeSobel, written anew by the simtdocs team in the sample's style. The sample reads a
// point-filtered texture with clamped, unnormalised coordinates; here tex2D is a __device__
// function reading the same clamped pixel from global memory (the simulator has no textures).

__device__ unsigned char ComputeSobel(unsigned char ul,  // upper left
                                      unsigned char um,  // upper middle
                                      unsigned char ur,  // upper right
                                      unsigned char ml,  // middle left
                                      unsigned char mm,  // middle (unused)
                                      unsigned char mr,  // middle right
                                      unsigned char ll,  // lower left
                                      unsigned char lm,  // lower middle
                                      unsigned char lr,  // lower right
                                      float fScale) {
  short Horz = ur + 2 * mr + lr - ul - 2 * ml - ll;
  short Vert = ul + 2 * um + ur - ll - 2 * lm - lr;
  short Sum = (short)(fScale * (abs((int)Horz) + abs((int)Vert)));
  if (Sum < 0) {
    return 0;
  } else if (Sum > 0xff) {
    return 0xff;
  }
  return (unsigned char)Sum;
}

// what tex2D<unsigned char>(tex, x, y) returns with cudaAddressModeClamp
__device__ unsigned char texClamp(const unsigned char *img, int w, int h, int x, int y) {
  return img[min(max(y, 0), h - 1) * w + min(max(x, 0), w - 1)];
}

__global__ void SobelTex(unsigned char *pSobelOriginal, const unsigned char *img, int w, int h, float fScale) {
  unsigned char *pSobel = pSobelOriginal + blockIdx.x * w;  // one row per block (Pitch = w)
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    unsigned char pix00 = texClamp(img, w, h, i - 1, blockIdx.x - 1);
    unsigned char pix01 = texClamp(img, w, h, i + 0, blockIdx.x - 1);
    unsigned char pix02 = texClamp(img, w, h, i + 1, blockIdx.x - 1);
    unsigned char pix10 = texClamp(img, w, h, i - 1, blockIdx.x + 0);
    unsigned char pix11 = texClamp(img, w, h, i + 0, blockIdx.x + 0);
    unsigned char pix12 = texClamp(img, w, h, i + 1, blockIdx.x + 0);
    unsigned char pix20 = texClamp(img, w, h, i - 1, blockIdx.x + 1);
    unsigned char pix21 = texClamp(img, w, h, i + 0, blockIdx.x + 1);
    unsigned char pix22 = texClamp(img, w, h, i + 1, blockIdx.x + 1);
    pSobel[i] = ComputeSobel(pix00, pix01, pix02, pix10, pix11, pix12, pix20, pix21, pix22, fScale);
  }
}
