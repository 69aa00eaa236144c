// Marks functions that GPU kernels call too (core/pattern.h, core/output_source.h).
#pragma once

#if defined(__CUDACC__)
#define FM_HOST_DEVICE __host__ __device__
#else
#define FM_HOST_DEVICE
#endif
