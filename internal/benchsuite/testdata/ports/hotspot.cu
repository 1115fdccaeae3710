// Times Rodinia's hotspot (ref/hotspot/hotspot.cu, included as is, its
// main renamed) through its own compute_tran_temp, which launches
// calculate_temp on 16x16 blocks once per pyramid of steps, on the
// default stream: Rodinia's run (512^2, pyramid height 2, 2 steps) and
// 4096^2, height 2, 60 steps. The inputs are ports_ref.go's, not
// Rodinia's data files. The label (argv[1]) says how run.sh built it:
// "hotspot:fma" with nvcc's default contraction, "hotspot" with
// -fmad=false. Ours.
#include "common.h"
#define main hotspot_sample_main
#include "hotspot/hotspot.cu"
#undef main

static void port_hotspot(const char *prog, int n, int pyramid, int steps) {
	size_t cells = size_t(n) * n;
	std::vector<float> temp(cells), power(cells), out(cells);
	for (int i = 0; i < n; i++) // as ports_ref.go's hotspotInputs
		for (int j = 0; j < n; j++) {
			temp[size_t(i) * n + j] = float(300 + (i * 7 + j * 13) % 50);
			power[size_t(i) * n + j] = float((i * 3 + j * 5) % 97) * 1e-4f;
		}
	// Each block writes a (16 - 2 pyramid)^2 square of cells, and its
	// border is pyramid cells on every side.
	int border = pyramid, inner = BLOCK_SIZE - 2 * pyramid;
	int blocks = (n + inner - 1) / inner;
	float *MatrixTemp[2], *MatrixPower;
	PORT_CHECK(cudaMalloc(&MatrixTemp[0], cells * 4));
	PORT_CHECK(cudaMalloc(&MatrixTemp[1], cells * 4));
	PORT_CHECK(cudaMalloc(&MatrixPower, cells * 4));
	PORT_CHECK(cudaMemcpy(MatrixTemp[0], temp.data(), cells * 4, cudaMemcpyHostToDevice));
	PORT_CHECK(cudaMemcpy(MatrixPower, power.data(), cells * 4, cudaMemcpyHostToDevice));
	double ms = port_time(0, [&] {
		compute_tran_temp(MatrixPower, MatrixTemp, n, n, steps, pyramid, blocks, blocks, border, border);
	});
	PORT_CHECK(cudaMemcpy(MatrixTemp[0], temp.data(), cells * 4, cudaMemcpyHostToDevice));
	int ret = compute_tran_temp(MatrixPower, MatrixTemp, n, n, steps, pyramid, blocks, blocks, border, border);
	PORT_CHECK(cudaMemcpy(out.data(), MatrixTemp[ret], cells * 4, cudaMemcpyDeviceToHost));
	const char *failure = nullptr;
	for (size_t i = 0; i < cells; i++) // the temperatures stay near their start
		if (!(out[i] > 200 && out[i] < 400)) {
			failure = "temperature out of range";
			break;
		}
	char config[64];
	snprintf(config, sizeof config, "%d/%d/%d", n, pyramid, steps);
	port_report(prog, config, ms, failure);
	cudaFree(MatrixTemp[0]);
	cudaFree(MatrixTemp[1]);
	cudaFree(MatrixPower);
}

int main(int argc, char **argv) {
	const char *prog = argc > 1 ? argv[1] : "hotspot:fma";
	port_hotspot(prog, 512, 2, 2);
	port_hotspot(prog, 4096, 2, 60);
	return 0;
}
