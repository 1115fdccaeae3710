// Times the CUDA samples' scanExclusiveShort and scanExclusiveLarge
// (ref/scan/scan.cu, included as is) as the sample's main calls them for
// the sizes it reports: its N = 13*2^20/2 elements as arrays of 1024 (one
// kernel) and of 262144 (three), on the default stream. Ours.
#include "common.h"
#include "scan/scan.cu"

int main() {
	const uint N = 13 * 1048576 / 2;
	std::vector<uint> in(N), out(N);
	uint32_t x = 2009; // as ports_ref.go's scanInput
	for (auto &v : in) v = port_lcg(x);
	uint *d_Input, *d_Output;
	PORT_CHECK(cudaMalloc(&d_Input, N * sizeof(uint)));
	PORT_CHECK(cudaMalloc(&d_Output, N * sizeof(uint)));
	PORT_CHECK(cudaMemcpy(d_Input, in.data(), N * sizeof(uint), cudaMemcpyHostToDevice));
	initScan();
	for (uint arrayLength : {MAX_SHORT_ARRAY_SIZE, MAX_LARGE_ARRAY_SIZE}) {
		double ms = port_time(0, [&] {
			if (arrayLength <= MAX_SHORT_ARRAY_SIZE)
				scanExclusiveShort(d_Output, d_Input, N / arrayLength, arrayLength);
			else
				scanExclusiveLarge(d_Output, d_Input, N / arrayLength, arrayLength);
		});
		PORT_CHECK(cudaMemcpy(out.data(), d_Output, N * sizeof(uint), cudaMemcpyDeviceToHost));
		const char *failure = nullptr;
		uint sum = 0;
		for (uint i = 0; i < N; i++) {
			if (i % arrayLength == 0) sum = 0;
			if (out[i] != sum) {
				failure = "wrong scan";
				break;
			}
			sum += in[i];
		}
		char config[64];
		snprintf(config, sizeof config, "%u/%u", N, arrayLength);
		port_report(arrayLength <= MAX_SHORT_ARRAY_SIZE ? "scan-short" : "scan-large", config, ms, failure);
	}
	closeScan();
	return 0;
}
