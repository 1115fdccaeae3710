// Times the CUDA samples' MatrixMulCUDA<32> (ref/matrixMul/matrixMul.cu,
// included as is, its main renamed) launched as the sample launches it:
// 32x32 threads, a grid of (wB/32, hA/32), on a non-blocking stream; at
// the sample's default size (A 320x320, B 640x320) and at 2048^3. The
// label (argv[1]) says how run.sh built it: "matrixMul:fma" with nvcc's
// default contraction, "matrixMul" with -fmad=false. Ours.
#include "common.h"
#define main matrixMul_sample_main
#include "matrixMul/matrixMul.cu"
#undef main

static void port_matrixMul(const char *prog, int hA, int wA, int wB) {
	std::vector<float> a(size_t(hA) * wA), b(size_t(wA) * wB), c(size_t(hA) * wB);
	for (size_t i = 0; i < a.size(); i++) a[i] = float(int(i % 7) - 3); // as ports_ref.go
	for (size_t i = 0; i < b.size(); i++) b[i] = float(int(i % 5) - 2);
	float *d_A, *d_B, *d_C;
	PORT_CHECK(cudaMalloc(&d_A, a.size() * 4));
	PORT_CHECK(cudaMalloc(&d_B, b.size() * 4));
	PORT_CHECK(cudaMalloc(&d_C, c.size() * 4));
	PORT_CHECK(cudaMemcpy(d_A, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
	PORT_CHECK(cudaMemcpy(d_B, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
	cudaStream_t stream;
	PORT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	double ms = port_time(stream, [&] { MatrixMulCUDA<32><<<dim3(wB / 32, hA / 32), dim3(32, 32), 0, stream>>>(d_C, d_A, d_B, wA, wB); });
	PORT_CHECK(cudaMemcpy(c.data(), d_C, c.size() * 4, cudaMemcpyDeviceToHost));
	const char *failure = nullptr;
	for (int i = 0; i < hA && !failure; i += 97) // a few rows against the host
		for (int j = 0; j < wB; j++) {
			float want = 0;
			for (int k = 0; k < wA; k++) want += a[size_t(i) * wA + k] * b[size_t(k) * wB + j];
			if (c[size_t(i) * wB + j] != want) {
				failure = "wrong product";
				break;
			}
		}
	char config[64];
	snprintf(config, sizeof config, "%dx%dx%d", hA, wA, wB);
	port_report(prog, config, ms, failure);
	cudaFree(d_A);
	cudaFree(d_B);
	cudaFree(d_C);
	cudaStreamDestroy(stream);
}

int main(int argc, char **argv) {
	const char *prog = argc > 1 ? argv[1] : "matrixMul:fma";
	port_matrixMul(prog, 320, 320, 640); // the sample's dimsA 320x320, dimsB 640x320
	port_matrixMul(prog, 2048, 2048, 2048);
	return 0;
}
