/* A stand-in CUDA driver for tst_profiledb: one H100 SXM5 80GB, so that cost/DeviceInfo's dlopen path runs
 * without a GPU. Attribute numbers are cuda.h's CUdevice_attribute values. FAKE_CUDA_INIT_ERROR=N makes
 * cuInit fail with N. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int cuInit(unsigned flags) {
    const char* error = getenv("FAKE_CUDA_INIT_ERROR");
    (void)flags;
    return error ? atoi(error) : 0;
}

int cuDriverGetVersion(int* version) {
    *version = 12040;
    return 0;
}

int cuDeviceGetCount(int* count) {
    *count = 1;
    return 0;
}

int cuDeviceGet(int* device, int ordinal) {
    if (ordinal != 0)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *device = 0;
    return 0;
}

int cuDeviceGetName(char* name, int len, int device) {
    (void)device;
    strncpy(name, "NVIDIA H100 80GB HBM3", (size_t)len);
    return 0;
}

int cuDeviceTotalMem_v2(size_t* bytes, int device) {
    (void)device;
    *bytes = (size_t)85032206336ull;
    return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
    (void)device;
    switch (attribute) {
    case 13: *value = 1980000; return 0;  /* CLOCK_RATE, kHz */
    case 16: *value = 132; return 0;      /* MULTIPROCESSOR_COUNT */
    case 36: *value = 2619000; return 0;  /* MEMORY_CLOCK_RATE, kHz */
    case 37: *value = 5120; return 0;     /* GLOBAL_MEMORY_BUS_WIDTH, bits */
    case 38: *value = 52428800; return 0; /* L2_CACHE_SIZE, bytes */
    case 75: *value = 9; return 0;        /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = 0; return 0;        /* COMPUTE_CAPABILITY_MINOR */
    default: *value = 0; return 1;        /* CUDA_ERROR_INVALID_VALUE */
    }
}

int cuGetErrorName(int error, const char** name) {
    *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
