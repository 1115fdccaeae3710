// Times the CUDA samples' histogram256() (ref/histogram/histogram256.cu,
// included as is): histogram256Kernel on 240 blocks of 192 threads and
// mergeHistogram256Kernel on 256 blocks of 256, on the default stream,
// over the sample's 64 MiB of random bytes. Ours.
#include "common.h"
#include "histogram/histogram256.cu"

int main() {
	const uint byteCount = 64 * 1048576;
	std::vector<uint> data(byteCount / 4), hist(256), want(256);
	uint32_t x = 2009; // as ports_ref.go's histogramInput
	for (auto &w : data) {
		w = 0;
		for (int sh = 0; sh < 32; sh += 8) w |= (port_lcg(x) >> 24) << sh;
		for (int sh = 0; sh < 32; sh += 8) want[(w >> sh) & 255]++;
	}
	uint *d_Data, *d_Histogram;
	PORT_CHECK(cudaMalloc(&d_Data, byteCount));
	PORT_CHECK(cudaMalloc(&d_Histogram, 256 * sizeof(uint)));
	PORT_CHECK(cudaMemcpy(d_Data, data.data(), byteCount, cudaMemcpyHostToDevice));
	initHistogram256();
	double ms = port_time(0, [&] { histogram256(d_Histogram, d_Data, byteCount); });
	PORT_CHECK(cudaMemcpy(hist.data(), d_Histogram, 256 * sizeof(uint), cudaMemcpyDeviceToHost));
	closeHistogram256();
	char config[32];
	snprintf(config, sizeof config, "%u", byteCount);
	port_report("histogram256", config, ms, hist == want ? nullptr : "wrong histogram");
	return 0;
}
