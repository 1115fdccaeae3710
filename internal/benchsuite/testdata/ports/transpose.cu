// Times the CUDA samples' transpose kernels copy and
// transposeNoBankConflicts (ref/transpose/transpose.cu, included as is,
// its main renamed) launched as the sample launches them: TILE_DIM x
// BLOCK_ROWS (32x16) threads, a grid of (n/32, n/32), on the default
// stream; at the sample's size on an H200 (1024^2) and at 8192^2. Ours.
#include "common.h"
#define main transpose_sample_main
#include "transpose/transpose.cu"
#undef main

static void port_transpose(int n) {
	size_t bytes = size_t(n) * n * 4;
	std::vector<float> in(size_t(n) * n), out(size_t(n) * n);
	for (size_t i = 0; i < in.size(); i++) in[i] = float(i); // as the sample
	float *d_idata, *d_odata;
	PORT_CHECK(cudaMalloc(&d_idata, bytes));
	PORT_CHECK(cudaMalloc(&d_odata, bytes));
	PORT_CHECK(cudaMemcpy(d_idata, in.data(), bytes, cudaMemcpyHostToDevice));
	dim3 grid(n / TILE_DIM, n / TILE_DIM), threads(TILE_DIM, BLOCK_ROWS);
	char config[32];
	snprintf(config, sizeof config, "%d", n);
	for (int k = 0; k < 2; k++) {
		void (*kernel)(float *, float *, int, int) = k == 0 ? &copy : &transposeNoBankConflicts;
		PORT_CHECK(cudaMemset(d_odata, 0, bytes));
		double ms = port_time(0, [&] { kernel<<<grid, threads>>>(d_odata, d_idata, n, n); });
		PORT_CHECK(cudaMemcpy(out.data(), d_odata, bytes, cudaMemcpyDeviceToHost));
		const char *failure = nullptr;
		for (size_t i = 0; i < size_t(n) && !failure; i++)
			for (size_t j = 0; j < size_t(n); j++)
				if (out[i * n + j] != (k == 0 ? in[i * n + j] : in[j * n + i])) {
					failure = "wrong result";
					break;
				}
		port_report(k == 0 ? "transpose-copy" : "transpose", config, ms, failure);
	}
	cudaFree(d_idata);
	cudaFree(d_odata);
}

int main() {
	port_transpose(1024);
	port_transpose(8192);
	return 0;
}
