// Times Rodinia's nw kernels needle_cuda_shared_1 and _2
// (ref/nw/needle_kernel.cu, included as is) launched as needle.cu's
// runTest launches them: a grid of i blocks of BLOCK_SIZE (16) threads
// for i = 1 .. block_width, then block_width-1 .. 1, on the default
// stream, for Rodinia's run (2048, penalty 10). The scores are
// ports_ref.go's, not BLOSUM62 lookups of random residues. Ours.
#include "common.h"
#include "nw/needle_kernel.cu"

int main() {
	const int n = 2048, penalty = 10;
	int rows = n + 1, cols = n + 1;
	size_t size = size_t(rows) * cols;
	std::vector<int> subst(size), matrix(size), out(size);
	uint32_t x = 7; // as ports_ref.go's nwInputs
	for (int i = 1; i < rows; i++)
		for (int j = 1; j < cols; j++) subst[size_t(i) * cols + j] = int(port_lcg(x) >> 28) - 4;
	for (int i = 1; i < rows; i++) matrix[size_t(i) * cols] = -i * penalty;
	for (int j = 1; j < cols; j++) matrix[j] = -j * penalty;
	int *ref_d, *matrix_d;
	PORT_CHECK(cudaMalloc(&ref_d, size * sizeof(int)));
	PORT_CHECK(cudaMalloc(&matrix_d, size * sizeof(int)));
	PORT_CHECK(cudaMemcpy(ref_d, subst.data(), size * sizeof(int), cudaMemcpyHostToDevice));
	PORT_CHECK(cudaMemcpy(matrix_d, matrix.data(), size * sizeof(int), cudaMemcpyHostToDevice));
	const int tiles = n / BLOCK_SIZE; // tiles per side: Rodinia's block_width
	double ms = port_time(0, [&] { // each run rewrites the same cells from the same borders
		for (int i = 1; i <= tiles; i++) // the anti-diagonals of tiles, growing
			needle_cuda_shared_1<<<dim3(i), dim3(BLOCK_SIZE)>>>(ref_d, matrix_d, cols, penalty, i, tiles);
		for (int i = tiles - 1; i >= 1; i--) // then shrinking
			needle_cuda_shared_2<<<dim3(i), dim3(BLOCK_SIZE)>>>(ref_d, matrix_d, cols, penalty, i, tiles);
	});
	PORT_CHECK(cudaMemcpy(out.data(), matrix_d, size * sizeof(int), cudaMemcpyDeviceToHost));
	const char *failure = nullptr;
	for (int i = 1; i < rows && !failure; i++)
		for (int j = 1; j < cols; j++) {
			int &m = matrix[size_t(i) * cols + j];
			m = maximum(matrix[size_t(i - 1) * cols + j - 1] + subst[size_t(i) * cols + j],
			            matrix[size_t(i) * cols + j - 1] - penalty, matrix[size_t(i - 1) * cols + j] - penalty);
			if (out[size_t(i) * cols + j] != m) {
				failure = "wrong scores";
				break;
			}
		}
	char config[32];
	snprintf(config, sizeof config, "%d/%d", n, penalty);
	port_report("nw", config, ms, failure);
	return 0;
}
