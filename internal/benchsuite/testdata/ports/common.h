// What the drivers of the originals share (run.sh builds one per program):
// error checks, the inputs' generator and the timing rule of qd bench's
// ports rows (internal/benchsuite/ports.go, portTime), so that both sides
// are timed alike. Ours; the originals' sources come from ref/ (prepare.sh).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define PORT_CHECK(x)                                                                              \
	do {                                                                                           \
		cudaError_t e_ = (x);                                                                      \
		if (e_ != cudaSuccess) {                                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1);                                                                               \
		}                                                                                          \
	} while (0)

// port_lcg is the inputs' generator, as ports_ref.go's lcg:
// x <- 1664525 x + 1013904223 mod 2^32.
static inline uint32_t port_lcg(uint32_t &x) {
	x = x * 1664525u + 1013904223u;
	return x;
}

// port_time is the median time in ms of one call of run (the original's
// timed unit: its launches, in its order) on stream s: two warm-up calls,
// then 15 trials, each the mean of as many back-to-back calls as fill
// about 2 ms (1 to 1000, from one timed call), timed by events.
template <class F>
static double port_time(cudaStream_t s, F run) {
	cudaEvent_t e0, e1;
	PORT_CHECK(cudaEventCreate(&e0));
	PORT_CHECK(cudaEventCreate(&e1));
	run();
	run();
	PORT_CHECK(cudaGetLastError());
	PORT_CHECK(cudaDeviceSynchronize());
	auto batch = [&](int inner) {
		PORT_CHECK(cudaEventRecord(e0, s));
		for (int i = 0; i < inner; i++) run();
		PORT_CHECK(cudaEventRecord(e1, s));
		PORT_CHECK(cudaEventSynchronize(e1));
		PORT_CHECK(cudaGetLastError());
		float ms = 0;
		PORT_CHECK(cudaEventElapsedTime(&ms, e0, e1));
		return double(ms) / inner;
	};
	double one = batch(1);
	int inner = int(std::min(1000.0, std::max(1.0, std::ceil(2.0 / std::max(one, 1e-6)))));
	std::vector<double> v(15);
	for (auto &x : v) x = batch(inner);
	std::sort(v.begin(), v.end());
	PORT_CHECK(cudaEventDestroy(e0));
	PORT_CHECK(cudaEventDestroy(e1));
	return v[v.size() / 2];
}

// port_report prints the line run.sh joins with qd bench's row
// "port PROG CONFIG": the time, or why there is none.
static void port_report(const char *prog, const char *config, double ms, const char *failure) {
	if (failure)
		printf("nvcc %s %s FAIL %s\n", prog, config, failure);
	else
		printf("nvcc %s %s %.6f\n", prog, config, ms);
	fflush(stdout);
}
