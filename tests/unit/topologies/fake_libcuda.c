// A stand-in for the CUDA driver library, for the dlopen path of topologies/cuda_driver: the four
// entry points it asks, with cuda.h's signatures (CUresult and CUdevice are ints). Two GPUs; GPU 1
// supports dma-buf as FAKE_GPU1_DMA_BUF says; FAKE_INIT_ERROR makes cuInit fail with it. Plain C,
// built without the sanitizer flags of the C++ code it is loaded into.
int cuInit(unsigned int flags) {
  (void)flags;
  return FAKE_INIT_ERROR;
}

int cuDeviceGetCount(int* count) {
  *count = 2;
  return 0;
}

int cuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute != 124) return 1;  // CUDA_ERROR_INVALID_VALUE: only DMA_BUF_SUPPORTED is asked
  *value = device == 1 ? FAKE_GPU1_DMA_BUF : 1;
  return 0;
}
