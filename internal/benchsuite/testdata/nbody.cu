// The all-pairs n-body step of qd bench's n-body rows (nbody.go), in CUDA C,
// as the reference for qd's generated code. Built and timed on a GPU
// machine by testdata/nbody.sh:
//
//	nvcc -O3 -arch=sm_90 -fmad=false nbody.cu   (qd's default semantics)
//	nvcc -O3 -arch=sm_90 nbody.cu               (FMA contraction)
//	nvcc -O3 -arch=sm_90 --use_fast_math nbody.cu
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>

__global__ void nbody(const float* px, const float* py, const float* pz, const float* m,
                      float* ax, float* ay, float* az, long n, float eps2) {
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		float xi = px[i], yi = py[i], zi = pz[i];
		float fx = 0, fy = 0, fz = 0;
		for (long j = 0; j < n; j++) {
			float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
			float r2 = dx * dx + dy * dy + dz * dz + eps2;
			float inv = 1.0f / sqrtf(r2);
			float s = m[j] * inv * inv * inv;
			fx += dx * s;
			fy += dy * s;
			fz += dz * s;
		}
		ax[i] = fx;
		ay[i] = fy;
		az[i] = fz;
	}
}

int main() {
	const long n = 1 << 16;
	float* h = new float[n];
	float* d[7];
	for (int k = 0; k < 7; k++) {
		cudaMalloc(&d[k], n * sizeof(float));
		for (long j = 0; j < n; j++) {
			h[j] = k < 4 ? sinf(float(j * (k + 3)) * 0.7f) : 0;
			if (k == 3) h[j] = 1 + h[j] * h[j];
		}
		cudaMemcpy(d[k], h, n * sizeof(float), cudaMemcpyHostToDevice);
	}
	int threads = 256, blocks = (n + threads - 1) / threads;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	nbody<<<blocks, threads>>>(d[0], d[1], d[2], d[3], d[4], d[5], d[6], n, 1e-3f);
	cudaEventRecord(e0);
	const int reps = 10;
	for (int r = 0; r < reps; r++)
		nbody<<<blocks, threads>>>(d[0], d[1], d[2], d[3], d[4], d[5], d[6], n, 1e-3f);
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	float ms;
	cudaEventElapsedTime(&ms, e0, e1);
	cudaMemcpy(h, d[4], n * sizeof(float), cudaMemcpyDeviceToHost);
	printf("%.3f ms per step (check %.6g), %s\n", ms / reps, h[12345], cudaGetErrorString(cudaGetLastError()));
	return 0;
}
