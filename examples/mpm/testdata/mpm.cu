// One substep of examples/mpm (kernels.go) in CUDA C++: the reference of
// the benchmark bar "MLS-MPM per substep within 1.1x the same algorithm in
// CUDA C++ built by nvcc -O3, same GPU". Built and run on a GPU machine by
// mpm.sh beside this file:
//
//	nvcc -O3 -arch=sm_90 -o mpm mpm.cu && ./mpm [frames]
//
// It does what the Go program does: the same constants, the same initial
// particles (qd.NewRand(88, k): Philox-4x32-10, ported below), the same four
// kernels of 256 threads a block as grid-stride loops (qd's default block
// and loop shape; the grid kernels run over the 128x128 cells flattened, as
// qd's NDRange does), frames of 50 substeps. Each configuration is timed
// twice with CUDA events, both from the initial state with frame 1 untimed
// and frames 2..frames timed: launched kernel by kernel on a stream, and as
// a CUDA graph of one frame (200 kernels) replayed once a frame.
//
// Configurations: 8192 and 65536 particles, each with
//   cell=12 atomics=scalar  the Go layout: Cell{V Vec2; M float32} is 12
//                           bytes; three float atomicAdds per node
//   cell=16 atomics=scalar  the cell padded to 16 bytes, same atomics:
//                           separates the layout's cost from the atomics'
//   cell=16 atomics=float2  sm_90's vector atomicAdd(float2*, float2) for
//                           the momentum (it needs the 8-byte alignment a
//                           16-byte cell gives), a float atomicAdd for the
//                           mass; built only where __CUDA_ARCH__ >= 900
//
// Output, one line per configuration, key=value pairs separated by spaces:
//
//	mpm n=8192 cell=12 atomics=scalar frames=100 launch_us=... graph_us=... mean_y=... mean_vy=... want_vy=... mass_err=... check=ok
//
// launch_us and graph_us are microseconds per substep (4 kernels);
// mean_y, mean_vy are the particles' means after frame 1 (the Go program's
// plain-Go run gives 0.39027 and -1.098002), want_vy is -1 - g*t, mass_err
// the grid's total mass after frame 1 relative to n*pMass, minus 1. check is
// ok when mean_vy is within 1e-4 of want_vy and |mass_err| < 1e-6, else
// FAIL (and the exit status is 1).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
	do {                                                                                 \
		cudaError_t err_ = (call);                                                       \
		if (err_ != cudaSuccess) {                                                       \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
			exit(2);                                                                     \
		}                                                                                \
	} while (0)

// The constants of kernels.go. Go folds its constant expressions exactly and
// rounds once to float32; so do these, computed in double.
constexpr int nGrid = 128;
constexpr int substeps = 50;
constexpr int bound = 3;
constexpr float dx = float(1.0 / nGrid);
constexpr float invDx = float(nGrid);
constexpr float dt = float(2e-4);
constexpr double pVolD = (0.5 / nGrid) * (0.5 / nGrid);
constexpr float pMass = float(pVolD * 1);
constexpr float dtGravity = float(2e-4 * 9.8);
constexpr float stressCoef = float(-2e-4 * pVolD * 4 * nGrid * nGrid * 400);
constexpr float apicScale = float(4.0 * nGrid * nGrid);
constexpr int blockDim256 = 256;

// vec2 and mat2 are qd.Vec2[float32] and qd.Mat2[float32] (row-major):
// plain floats, 4-byte aligned, so that the structs below have Go's layout.
struct vec2 {
	float x, y;
};
__host__ __device__ inline vec2 operator+(vec2 a, vec2 b) { return {a.x + b.x, a.y + b.y}; }
__host__ __device__ inline vec2 operator-(vec2 a, vec2 b) { return {a.x - b.x, a.y - b.y}; }
__host__ __device__ inline vec2 operator*(vec2 a, vec2 b) { return {a.x * b.x, a.y * b.y}; }
__host__ __device__ inline vec2 operator*(vec2 a, float s) { return {a.x * s, a.y * s}; }

struct mat2 {
	float a00, a01, a10, a11;
};
__host__ __device__ inline vec2 mulVec(mat2 m, vec2 v) { return {m.a00 * v.x + m.a01 * v.y, m.a10 * v.x + m.a11 * v.y}; }

struct Particle {
	vec2 x, v;
	mat2 c;
	float j;
};
static_assert(sizeof(Particle) == 36, "Particle must have Go's layout");

struct Cell12 {
	vec2 v;
	float m;
};
static_assert(sizeof(Cell12) == 12, "Cell12 must have Go's layout");

struct Cell16 {
	float2 v; // 8-byte aligned: what atomicAdd(float2*, float2) needs
	float m;
};
static_assert(sizeof(Cell16) == 16, "Cell16 is padded to 16 bytes");

enum Atomics { Scalar, Float2 };

// Stencil is the 3x3 nodes a particle touches: the lower-left node, the
// particle's offset from it in cells, and the quadratic B-spline weights.
struct Stencil {
	int bi, bj;
	vec2 fx;
	vec2 w[3];
};

__device__ inline Stencil stencil(vec2 x) {
	Stencil s;
	vec2 xg = x * invDx;
	s.bi = int(xg.x - 0.5f);
	s.bj = int(xg.y - 0.5f);
	s.fx = xg - vec2{float(s.bi), float(s.bj)};
	vec2 a = vec2{1.5f, 1.5f} - s.fx;
	vec2 b = s.fx - vec2{1, 1};
	vec2 c = s.fx - vec2{0.5f, 0.5f};
	s.w[0] = (a * a) * 0.5f;
	s.w[1] = vec2{0.75f, 0.75f} - b * b;
	s.w[2] = (c * c) * 0.5f;
	return s;
}

template <class Cell>
__global__ void clearGrid(Cell* grid) {
	for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nGrid * nGrid; k += gridDim.x * blockDim.x)
		grid[k] = Cell{};
}

template <class Cell, Atomics A>
__device__ inline void addMomentum(Cell* c, vec2 dv) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	if constexpr (A == Float2) {
		atomicAdd(&c->v, make_float2(dv.x, dv.y));
		return;
	}
#endif
	atomicAdd(&c->v.x, dv.x);
	atomicAdd(&c->v.y, dv.y);
}

template <class Cell, Atomics A>
__global__ void p2g(const Particle* __restrict__ ps, Cell* grid, int n) {
	for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
		Particle q = ps[p];
		Stencil s = stencil(q.x);
		float stress = stressCoef * (q.j - 1);
		mat2 affine = {stress + q.c.a00 * pMass, q.c.a01 * pMass, q.c.a10 * pMass, stress + q.c.a11 * pMass};
		vec2 mv = q.v * pMass;
#pragma unroll
		for (int i = 0; i < 3; i++) {
#pragma unroll
			for (int j = 0; j < 3; j++) {
				vec2 dpos = (vec2{float(i), float(j)} - s.fx) * dx;
				float wt = s.w[i].x * s.w[j].y;
				vec2 dv = (mv + mulVec(affine, dpos)) * wt;
				Cell* c = &grid[(s.bi + i) * nGrid + (s.bj + j)];
				addMomentum<Cell, A>(c, dv);
				atomicAdd(&c->m, wt * pMass);
			}
		}
	}
}

template <class Cell>
__global__ void gridUpdate(Cell* grid) {
	for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nGrid * nGrid; k += gridDim.x * blockDim.x) {
		int i = k / nGrid, j = k % nGrid;
		Cell c = grid[k];
		float vx = c.v.x, vy = c.v.y;
		if (c.m > 0) {
			vx = vx / c.m;
			vy = vy / c.m;
		}
		vy -= dtGravity;
		if ((i < bound && vx < 0) || (i > nGrid - bound && vx > 0))
			vx = 0;
		if ((j < bound && vy < 0) || (j > nGrid - bound && vy > 0))
			vy = 0;
		grid[k].v.x = vx;
		grid[k].v.y = vy;
	}
}

template <class Cell>
__global__ void g2p(Particle* __restrict__ ps, const Cell* __restrict__ grid, int n) {
	for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
		Particle q = ps[p];
		Stencil s = stencil(q.x);
		vec2 v = {0, 0};
		mat2 c = {0, 0, 0, 0};
#pragma unroll
		for (int i = 0; i < 3; i++) {
#pragma unroll
			for (int j = 0; j < 3; j++) {
				vec2 dpos = (vec2{float(i), float(j)} - s.fx) * dx;
				float wt = s.w[i].x * s.w[j].y;
				const Cell& node = grid[(s.bi + i) * nGrid + (s.bj + j)];
				vec2 gv = {node.v.x, node.v.y};
				v = v + gv * wt;
				float k = wt * apicScale;
				c.a00 += gv.x * dpos.x * k;
				c.a01 += gv.x * dpos.y * k;
				c.a10 += gv.y * dpos.x * k;
				c.a11 += gv.y * dpos.y * k;
			}
		}
		q.v = v;
		q.x = q.x + v * dt;
		q.j *= 1 + dt * (c.a00 + c.a11);
		q.c = c;
		ps[p] = q;
	}
}

// archOf reports the __CUDA_ARCH__ the device code was built for.
__global__ void archOf(int* out) {
#ifdef __CUDA_ARCH__
	*out = __CUDA_ARCH__;
#endif
}

// philox is Philox-4x32-10 (Salmon et al., SC 2011), as qd's rand.go has
// it: word w of qd.NewRand(seed, stream)'s first block.
static uint32_t philox(uint64_t seed, uint64_t stream, int w) {
	uint32_t c[4] = {0, 0, uint32_t(stream), uint32_t(stream >> 32)};
	uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k0 += 0x9E3779B9u;
			k1 += 0xBB67AE85u;
		}
		uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
		uint32_t n0 = uint32_t(p1 >> 32) ^ c[1] ^ k0, n1 = uint32_t(p1);
		uint32_t n2 = uint32_t(p0 >> 32) ^ c[3] ^ k1, n3 = uint32_t(p0);
		c[0] = n0, c[1] = n1, c[2] = n2, c[3] = n3;
	}
	return c[w];
}

// initial is initialParticles of sim.go: the block [0.2, 0.6]^2 moving down.
static std::vector<Particle> initial(int n) {
	std::vector<Particle> ps(n);
	for (int k = 0; k < n; k++) {
		float x = 0.2f + 0.4f * (float(philox(88, k, 0) >> 8) * 0x1p-24f);
		float y = 0.2f + 0.4f * (float(philox(88, k, 1) >> 8) * 0x1p-24f);
		ps[k] = Particle{{x, y}, {0, -1}, {0, 0, 0, 0}, 1};
	}
	return ps;
}

static int blocksFor(int total) { return (total + blockDim256 - 1) / blockDim256; }

template <class Cell, Atomics A>
static void enqueueFrame(cudaStream_t s, Particle* ps, Cell* grid, int n) {
	for (int t = 0; t < substeps; t++) {
		clearGrid<Cell><<<blocksFor(nGrid * nGrid), blockDim256, 0, s>>>(grid);
		p2g<Cell, A><<<blocksFor(n), blockDim256, 0, s>>>(ps, grid, n);
		gridUpdate<Cell><<<blocksFor(nGrid * nGrid), blockDim256, 0, s>>>(grid);
		g2p<Cell><<<blocksFor(n), blockDim256, 0, s>>>(ps, grid, n);
	}
}

// bench runs one configuration and prints its line; it returns false when
// the check fails.
template <class Cell, Atomics A>
static bool bench(int n, int frames, int cellBytes, const char* atomics) {
	std::vector<Particle> start = initial(n);
	Particle* ps;
	Cell* grid;
	CHECK(cudaMalloc(&ps, n * sizeof(Particle)));
	CHECK(cudaMalloc(&grid, nGrid * nGrid * sizeof(Cell)));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	auto reset = [&] {
		CHECK(cudaMemcpyAsync(ps, start.data(), n * sizeof(Particle), cudaMemcpyHostToDevice, s));
		CHECK(cudaMemsetAsync(grid, 0, nGrid * nGrid * sizeof(Cell), s));
	};

	// Launched kernel by kernel; frame 1 is also the check.
	reset();
	enqueueFrame<Cell, A>(s, ps, grid, n);
	CHECK(cudaStreamSynchronize(s));
	std::vector<Particle> got(n);
	std::vector<Cell> cells(nGrid * nGrid);
	CHECK(cudaMemcpy(got.data(), ps, n * sizeof(Particle), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(cells.data(), grid, cells.size() * sizeof(Cell), cudaMemcpyDeviceToHost));
	double y = 0, vy = 0, mass = 0;
	for (const Particle& p : got) {
		y += p.x.y;
		vy += p.v.y;
	}
	for (const Cell& c : cells) // the last p2g's masses: gridUpdate leaves them
		mass += c.m;
	y /= n;
	vy /= n;
	double wantVy = -1 - double(dtGravity) * substeps;
	double massErr = mass / (double(n) * pMass) - 1;
	bool ok = std::fabs(vy - wantVy) <= 1e-4 && std::fabs(massErr) < 1e-6;

	CHECK(cudaEventRecord(e0, s));
	for (int f = 1; f < frames; f++)
		enqueueFrame<Cell, A>(s, ps, grid, n);
	CHECK(cudaEventRecord(e1, s));
	CHECK(cudaEventSynchronize(e1));
	float launchMs;
	CHECK(cudaEventElapsedTime(&launchMs, e0, e1));

	// One frame captured as a graph, replayed once a frame.
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	enqueueFrame<Cell, A>(s, ps, grid, n);
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
	reset();
	CHECK(cudaGraphLaunch(exec, s)); // frame 1, untimed
	CHECK(cudaEventRecord(e0, s));
	for (int f = 1; f < frames; f++)
		CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaEventRecord(e1, s));
	CHECK(cudaEventSynchronize(e1));
	float graphMs;
	CHECK(cudaEventElapsedTime(&graphMs, e0, e1));
	CHECK(cudaGetLastError());

	double per = 1000.0 / (double(frames - 1) * substeps); // ms per run -> µs per substep
	printf("mpm n=%d cell=%d atomics=%s frames=%d launch_us=%.3f graph_us=%.3f mean_y=%.5f mean_vy=%.6f want_vy=%.6f mass_err=%.2e check=%s\n",
	       n, cellBytes, atomics, frames, launchMs * per, graphMs * per, y, vy, wantVy, massErr, ok ? "ok" : "FAIL");
	fflush(stdout);

	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(ps));
	CHECK(cudaFree(grid));
	return ok;
}

int main(int argc, char** argv) {
	int frames = argc > 1 ? atoi(argv[1]) : 100;
	if (frames < 2) {
		fprintf(stderr, "usage: mpm [frames >= 2, default 100]\n");
		return 2;
	}
	int *dArch, arch = 0;
	CHECK(cudaMalloc(&dArch, sizeof(int)));
	CHECK(cudaMemset(dArch, 0, sizeof(int)));
	archOf<<<1, 1>>>(dArch);
	CHECK(cudaMemcpy(&arch, dArch, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(dArch));
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	printf("# %s, sm_%d%d, device code built for __CUDA_ARCH__ %d\n", prop.name, prop.major, prop.minor, arch);

	bool ok = true;
	for (int n : {8192, 65536}) {
		ok &= bench<Cell12, Scalar>(n, frames, 12, "scalar");
		ok &= bench<Cell16, Scalar>(n, frames, 16, "scalar");
		if (arch >= 900)
			ok &= bench<Cell16, Float2>(n, frames, 16, "float2");
		else
			printf("mpm n=%d cell=16 atomics=float2 skipped: needs device code for sm_90 or later\n", n);
	}
	return ok ? 0 : 1;
}
