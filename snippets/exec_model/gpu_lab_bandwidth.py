# %% [markdown]
# # GPU 实验：看见机器 · GPU lab: see the machine
#
# 只在有 CUDA GPU 和 PyTorch 的机器上运行；别处它只打印一行说明就退出。
# Runs only where PyTorch sees a CUDA GPU; elsewhere it prints one line and exits.
#
# Part A reads the device; part B measures the effective bandwidth of `y = 2 * x`
# against tensor size. Run it: `python snippets/exec_model/gpu_lab_bandwidth.py`

# %%
import importlib.util


def why_not_here():
    """None when this machine can run the lab, else the reason it cannot."""
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed"
    import torch

    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA GPU"
    return None


if __name__ == "__main__" and why_not_here():
    print(f"GPU lab skipped: {why_not_here()} (needs PyTorch with CUDA)")
    raise SystemExit(0)

# %%
# --8<-- [start:query]
import torch

assert torch.cuda.is_available(), "this lab needs a CUDA GPU"

WARP = 32  # every NVIDIA GPU so far (AMD: 64 on CDNA, 32 natively on RDNA)
# Resident threads per SM by compute capability, from the CUDA C++ Programming Guide 12.9
# (Table 21, "Maximum number of resident threads per SM"); used only if PyTorch does not
# report it. 8.7 (Jetson Orin) is 1,536 like 8.6 and 8.9, not 2,048.
THREADS_PER_SM = {(7, 0): 2048, (7, 5): 1024, (8, 0): 2048, (8, 6): 1536, (8, 7): 1536,
                  (8, 9): 1536, (9, 0): 2048}

p = torch.cuda.get_device_properties(0)
cc = (p.major, p.minor)
per_sm = getattr(p, "max_threads_per_multi_processor", None) or THREADS_PER_SM.get(cc)
print(f"device             : {p.name} (compute capability {p.major}.{p.minor})")
print(f"SMs                : {p.multi_processor_count}")
print(f"memory             : {p.total_memory / 2**30:.1f} GiB")
if per_sm:
    print(f"max warps per SM   : {per_sm // WARP}")
    print(f"max resident warps : {per_sm // WARP * p.multi_processor_count} (whole GPU)")
# --8<-- [end:query]

# %%
# --8<-- [start:sweep]
def effective_gbps(elements, calls=50):
    """Bytes read and written per second by y = 2 * x on float32 tensors."""
    x = torch.randn(elements, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    for _ in range(3):  # warm up: first-call allocation and clocks
        torch.mul(x, 2.0, out=y)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        torch.mul(x, 2.0, out=y)  # reads x and writes y: 8 bytes per element
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / calls  # elapsed_time is in milliseconds
    return 2 * x.nbytes / seconds / 1e9


print("\nelements     effective GB/s")
for elements in (2**12, 2**16, 2**20, 2**24, 2**26):
    print(f"{elements:>12,}  {effective_gbps(elements):8.1f}")
# --8<-- [end:sweep]
