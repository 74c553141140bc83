"""Draw the image exhibits of fixtures/bank/06-performance.json (Performance Optimization).

Writes into fixtures/bank/exhibits/:
- 06-nsys-decode-timeline.png: an Nsight Systems-style timeline of one batch-1 LLM decode step
  in eager PyTorch (many short kernels separated by CPU launch gaps), for question 6080.
- 06-perf-analyzer-curve.png: a perf_analyzer concurrency sweep (throughput against p99 latency)
  for an image classifier on Triton, for question 6031.

The data are illustrative, made up to show one pattern clearly. Run: python 06-performance.py
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"


def timeline():
    fig, ax = plt.subplots(figsize=(11, 4.2), dpi=100)
    rows = {
        "NVTX (python)": 4,
        "CUDA API (python thread)": 3,
        "CUDA HW: kernels": 2,
        "CUDA HW: memcpy": 1,
    }
    names = ["rmsnorm", "gemv_qkv", "rope", "attn_decode", "gemv_o", "add", "rmsnorm", "gemv_up", "silu_mul", "gemv_down", "add"]
    # NVTX range covering the step
    ax.add_patch(Rectangle((2, rows["NVTX (python)"] - 0.35), 236, 0.7, color="#8fbc8f"))
    ax.text(120, rows["NVTX (python)"], "decode_step (layer 7 of 24 shown)", ha="center", va="center", fontsize=9)
    t = 4.0
    k = 0
    while t < 232:
        # CPU launch call, about 8 us each
        ax.add_patch(Rectangle((t, rows["CUDA API (python thread)"] - 0.3), 7.0, 0.6, color="#4682b4"))
        if k == 0:
            ax.text(t, rows["CUDA API (python thread)"] + 0.42, "cudaLaunchKernel (each blue block)", ha="left", fontsize=7.5)
        # GPU kernel starts shortly after the launch and lasts 2-3.5 us
        dur = 2.0 + (k % 3) * 0.7
        ax.add_patch(Rectangle((t + 6.0, rows["CUDA HW: kernels"] - 0.3), dur, 0.6, color="#cd5c5c"))
        if k % 4 == 0:
            ax.text(t + 6.0 + dur / 2, rows["CUDA HW: kernels"] - 0.55, names[k % len(names)], ha="center", va="top", fontsize=7)
        t += 9.5
        k += 1
    ax.text(236, rows["CUDA HW: memcpy"], "(no copies in this range)", ha="right", va="center", fontsize=8, color="#555555")
    ax.set_yticks(list(rows.values()))
    ax.set_yticklabels(list(rows.keys()), fontsize=9)
    ax.set_ylim(0.3, 4.8)
    ax.set_xlim(0, 240)
    ax.set_xlabel("time (µs)")
    ax.set_title("Nsight Systems timeline, one transformer layer of a decode step (batch 1, eager PyTorch, H100)", fontsize=10)
    ax.text(
        2, 0.45,
        f"{k} kernels in 240 µs; kernel busy time ≈ 27% of the range; GPU idle between kernels",
        fontsize=8.5, color="#222222",
    )
    ax.grid(axis="x", linestyle=":", alpha=0.5)
    fig.tight_layout()
    fig.savefig(OUT / "06-nsys-decode-timeline.png")
    plt.close(fig)


def curve():
    conc = [1, 2, 4, 8, 16, 32, 64]
    p99 = [4.1, 4.9, 6.8, 11.5, 22.0, 43.0, 86.0]
    thr = [240, 405, 590, 700, 735, 748, 752]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    ax.plot(p99, thr, marker="o", color="#1f77b4")
    for c, x, y in zip(conc, p99, thr):
        ax.annotate(f"concurrency {c}", (x, y), textcoords="offset points", xytext=(6, -14), fontsize=8)
    ax.axvline(40, color="#d62728", linestyle="--")
    ax.text(41, 300, "p99 target: 40 ms", color="#d62728", fontsize=9)
    ax.set_xlabel("p99 latency (ms)")
    ax.set_ylabel("throughput (infer/sec)")
    ax.set_xlim(0, 95)
    ax.set_ylim(0, 850)
    ax.set_title("perf_analyzer sweep, --concurrency-range 1:64 (powers of 2), --percentile=99", fontsize=10)
    ax.grid(linestyle=":", alpha=0.6)
    fig.tight_layout()
    fig.savefig(OUT / "06-perf-analyzer-curve.png")
    plt.close(fig)


def roofline():
    """Q6114: a roofline with three kernels: memory-bound, compute-bound and latency-bound (well under both roofs)."""
    import numpy as np

    bw = 2.0e12       # bytes/s, memory roof (illustrative)
    peak = 2.0e14     # FLOP/s, compute roof (illustrative); ridge at 100 FLOP/byte
    ai = np.logspace(-1, 3.5, 400)
    roof = np.minimum(bw * ai, peak)
    fig, ax = plt.subplots(figsize=(8, 5.2), dpi=100)
    ax.loglog(ai, roof, color="#333333", linewidth=2.2, label="roofline (memory roof, then compute roof)")
    ax.axvline(peak / bw, color="#999999", linestyle=":", linewidth=1)
    ax.text(peak / bw * 1.08, 4e11, "ridge point\n~100 FLOP/byte", fontsize=8.5, color="#555555")
    kernels = [
        ("layernorm_fwd", 0.6, 0.92 * bw * 0.6, "#C44E52"),
        ("gemm_fp16", 300.0, 0.88 * peak, "#4C72B0"),
        ("topk_small", 2.0, 0.05 * bw * 2.0, "#55A868"),
    ]
    for name, x, y, color in kernels:
        ax.plot(x, y, "o", markersize=9, color=color, label=f"{name}: {x:g} FLOP/byte")
        ax.annotate(name, xy=(x, y), xytext=(x * 1.3, y * 0.45), fontsize=9, color=color)
    ax.set_xlabel("Arithmetic intensity (FLOP per byte of DRAM traffic)")
    ax.set_ylabel("Achieved performance (FLOP/s)")
    ax.set_xlim(0.1, 3000)
    ax.set_ylim(5e10, 6e14)
    ax.set_title("Roofline (Nsight Compute style): three kernels of one inference step", fontsize=10)
    ax.legend(loc="lower right", fontsize=8.5)
    ax.grid(which="both", linestyle=":", alpha=0.4)
    fig.tight_layout()
    fig.savefig(OUT / "06-roofline.png")
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    timeline()
    curve()
    roofline()
