// A stand-in for the CUDA runtime, for machines without a GPU or the CUDA
// toolkit: mpm.sh -host compiles mpm.cu against it with the host's C++
// compiler (its <<<...>>> launch configurations removed), which checks the
// C++ and runs every kernel serially on the host (one block of one thread:
// the grid-stride loops cover every element). The physics check of frame 1
// is then real; the timings are not, and a graph launch does nothing.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__

struct dim3 {
	unsigned x, y, z;
};
inline dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1}, gridDim{1, 1, 1};

struct alignas(8) float2 { // CUDA's float2 is 8-byte aligned too
	float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float atomicAdd(float* p, float v) {
	float old = *p;
	*p += v;
	return old;
}
inline float2 atomicAdd(float2* p, float2 v) {
	float2 old = *p;
	p->x += v.x;
	p->y += v.y;
	return old;
}

typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
typedef struct CUstream_st* cudaStream_t;
typedef double* cudaEvent_t; // the host time it was recorded at, in ms
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };
enum cudaStreamCaptureMode { cudaStreamCaptureModeThreadLocal };
constexpr unsigned cudaStreamNonBlocking = 1;
struct cudaDeviceProp {
	char name[256];
	int major, minor;
};

inline const char* cudaGetErrorString(cudaError_t) { return "no error"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
template <class T> cudaError_t cudaMalloc(T** p, size_t n) {
	*p = static_cast<T*>(calloc(1, n));
	return *p ? cudaSuccess : 2;
}
inline cudaError_t cudaFree(void* p) { return free(p), cudaSuccess; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { return memcpy(d, s, n), cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }
inline cudaError_t cudaMemset(void* d, int v, size_t n) { return memset(d, v, n), cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) { return cudaMemset(d, v, n); }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return *s = nullptr, cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { return *e = new double(0), cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
	*e = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
	return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { return *ms = float(*b - *a), cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return delete e, cudaSuccess; }
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaSuccess; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) { return *g = nullptr, cudaSuccess; }
inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* e, cudaGraph_t, unsigned long long) { return *e = nullptr, cudaSuccess; }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
	*p = cudaDeviceProp{"host stand-in (mpm.sh -host): timings are not the GPU's", 0, 0};
	return cudaSuccess;
}
