# PyTorch's figures for the block-level rows of qd bench (blocks.go), on the
# same GPU in the same run: python3 torch_blocks.py
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"


def time_ms(f, reps=50):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            f()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / reps)
    return min(times)


print("torch", torch.__version__, torch.cuda.get_device_name())
a = torch.randn(1024, 1024, device=dev)
b = torch.randn(1024, 1024, device=dev)
t = time_ms(lambda: torch.matmul(a, b))
print(f"matmul 1024^2 fp32 (no TF32): {t*1e3:.1f} us, {2*1024**3/t/1e9:.1f} TFLOP/s")
x = torch.randn(8192, 8192, device=dev)
t = time_ms(lambda: x.t().contiguous())
print(f"transpose 8192^2 fp32 (.t().contiguous()): {t*1e3:.1f} us, {8*8192**2/t/1e6:.0f} GB/s")
t = time_ms(lambda: x.clone())
print(f"copy 8192^2 fp32 (clone): {t*1e3:.1f} us, {8*8192**2/t/1e6:.0f} GB/s")
d = torch.randint(0, 256, (64 << 20,), device=dev, dtype=torch.uint8)
t = time_ms(lambda: torch.bincount(d, minlength=256), reps=20)
print(f"bincount 64 MiB uint8: {t*1e3:.1f} us, {(64<<20)/t/1e6:.0f} GB/s")
s = torch.randint(-3, 4, (1 << 26,), device=dev, dtype=torch.int32)
t = time_ms(lambda: torch.cumsum(s, 0, dtype=torch.int32), reps=20)
print(f"cumsum 2^26 int32: {t*1e3:.1f} us")
f = torch.ones(1 << 28, device=dev)
t = time_ms(lambda: torch.sum(f), reps=20)
print(f"sum 2^28 fp32: {t*1e3:.1f} us, {4*(1<<28)/t/1e6:.0f} GB/s read")
k = torch.randint(0, 1 << 31, (1 << 20,), device=dev, dtype=torch.int32)
t = time_ms(lambda: torch.sort(k), reps=20)
print(f"sort 2^20 int32: {t*1e3:.1f} us")
