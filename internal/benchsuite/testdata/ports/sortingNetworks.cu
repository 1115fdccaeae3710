// Times the CUDA samples' bitonicSort() (ref/sortingNetworks/bitonicSort.cu,
// included as is) as the sample's main reports it: one array of its
// N = 2^20 keys below 65536 with their indices, direction 0, on the
// default stream (bitonicSortShared1, then bitonicMergeGlobal and
// bitonicMergeShared per merge size). Ours.
#include "common.h"
#include "sortingNetworks/bitonicSort.cu"

int main() {
	const uint N = 1048576, DIR = 0;
	std::vector<uint> key(N), val(N), outKey(N), outVal(N);
	uint32_t x = 2001; // as ports_ref.go's sortInput
	for (uint i = 0; i < N; i++) {
		key[i] = (port_lcg(x) >> 8) % 65536;
		val[i] = i;
	}
	uint *d_InputKey, *d_InputVal, *d_OutputKey, *d_OutputVal;
	PORT_CHECK(cudaMalloc(&d_InputKey, N * sizeof(uint)));
	PORT_CHECK(cudaMalloc(&d_InputVal, N * sizeof(uint)));
	PORT_CHECK(cudaMalloc(&d_OutputKey, N * sizeof(uint)));
	PORT_CHECK(cudaMalloc(&d_OutputVal, N * sizeof(uint)));
	PORT_CHECK(cudaMemcpy(d_InputKey, key.data(), N * sizeof(uint), cudaMemcpyHostToDevice));
	PORT_CHECK(cudaMemcpy(d_InputVal, val.data(), N * sizeof(uint), cudaMemcpyHostToDevice));
	double ms = port_time(0, [&] { bitonicSort(d_OutputKey, d_OutputVal, d_InputKey, d_InputVal, N / N, N, DIR); });
	PORT_CHECK(cudaMemcpy(outKey.data(), d_OutputKey, N * sizeof(uint), cudaMemcpyDeviceToHost));
	PORT_CHECK(cudaMemcpy(outVal.data(), d_OutputVal, N * sizeof(uint), cudaMemcpyDeviceToHost));
	const char *failure = nullptr;
	for (uint i = 0; i < N && !failure; i++)
		if ((i > 0 && outKey[i] > outKey[i - 1]) || outVal[i] >= N || key[outVal[i]] != outKey[i]) failure = "not sorted";
	char config[32];
	snprintf(config, sizeof config, "%u", N);
	port_report("bitonicSort", config, ms, failure);
	return 0;
}
