#!/usr/bin/env python3
"""Exhibit images for fixtures/bank/01-experimentation-evaluation.json.

    python3 tools/exhibits/01-experimentation-evaluation.py   # needs matplotlib and numpy

Writes into fixtures/bank/exhibits/:
- 01-fid-kid-vs-samples.png  (Q1503) FID and KID of one fixed generator against the number of generated images
- 01-mos-intervals.png       (Q1517) MOS with 95% confidence intervals for recordings and three TTS systems
- 01-recall-at-k.png         (Q1523) Recall@K of two first-stage retrievers
- 01-wer-by-snr.png          (Q1627) WER of two ASR models by signal-to-noise band

The numbers are illustrative and chosen to match the question stems; they are not measurements of real models.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"
DPI = 100


def fid_kid():
    n = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000]
    labels = ["1k", "2k", "5k", "10k", "20k", "50k"]
    fid = [19.3, 15.9, 13.8, 13.1, 12.7, 12.4]
    fid_sd = [0.45, 0.30, 0.18, 0.12, 0.08, 0.05]
    kid = [4.2, 4.0, 4.1, 4.1, 4.1, 4.1]  # KID x 1000
    kid_sd = [0.90, 0.62, 0.40, 0.28, 0.20, 0.12]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    left.errorbar(n, fid, yerr=fid_sd, marker="o", capsize=4, color="tab:blue")
    left.set_title("FID (lower is better)")
    left.set_ylabel("FID")
    left.set_ylim(10, 21)
    right.errorbar(n, kid, yerr=kid_sd, marker="s", capsize=4, color="tab:orange")
    right.set_title("KID x 1000 (lower is better)")
    right.set_ylabel("KID x 1000")
    right.set_ylim(2, 6)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(n)
        ax.set_xticklabels(labels)
        ax.minorticks_off()
        ax.set_xlabel("Number of generated images (log scale)")
        ax.grid(True, alpha=0.3)
    fig.suptitle("One fixed generator, same real reference set; mean ± s.d. over 10 random subsets")
    fig.tight_layout()
    fig.savefig(OUT / "01-fid-kid-vs-samples.png", dpi=DPI)
    plt.close(fig)


def mos():
    systems = ["Recordings", "TTS-A", "TTS-B", "TTS-C"]
    means = [4.52, 4.08, 4.15, 3.61]
    low = [4.44, 3.96, 4.02, 3.50]
    high = [4.60, 4.20, 4.28, 3.72]
    err = [[m - lo for m, lo in zip(means, low)], [hi - m for m, hi in zip(means, high)]]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    bars = ax.bar(systems, means, yerr=err, capsize=8, color=["0.55", "tab:blue", "tab:green", "tab:red"])
    for bar, m, lo, hi in zip(bars, means, low, high):
        ax.text(bar.get_x() + bar.get_width() / 2, hi + 0.05, f"{m:.2f}\n({lo:.2f}-{hi:.2f})",
                ha="center", va="bottom", fontsize=9)
    ax.set_ylim(1, 5.4)
    ax.set_yticks([1, 2, 3, 4, 5])
    ax.set_ylabel("Mean opinion score (1-5)")
    ax.set_title("MOS with 95% confidence intervals\n40 listeners, the same 30 sentences for every system")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "01-mos-intervals.png", dpi=DPI)
    plt.close(fig)


def recall_at_k():
    k = [1, 5, 10, 20, 50]
    a = [0.58, 0.74, 0.80, 0.84, 0.88]
    b = [0.49, 0.72, 0.83, 0.90, 0.95]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(k, a, marker="o", label="Retriever A", color="tab:blue")
    ax.plot(k, b, marker="s", label="Retriever B", color="tab:orange", linestyle="--")
    for x, ya, yb in zip(k, a, b):
        ax.annotate(f"{ya:.2f}", (x, ya), textcoords="offset points", xytext=(0, 8 if ya >= yb else -14),
                    ha="center", fontsize=8, color="tab:blue")
        ax.annotate(f"{yb:.2f}", (x, yb), textcoords="offset points", xytext=(0, 8 if yb > ya else -14),
                    ha="center", fontsize=8, color="tab:orange")
    ax.set_xscale("log")
    ax.set_xticks(k)
    ax.set_xticklabels([str(x) for x in k])
    ax.minorticks_off()
    ax.set_ylim(0.4, 1.0)
    ax.set_xlabel("K (log scale)")
    ax.set_ylabel("Recall@K")
    ax.set_title("Recall@K of two first-stage retrievers (same labeled queries)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(OUT / "01-recall-at-k.png", dpi=DPI)
    plt.close(fig)


def wer_by_snr():
    bands = ["Clean\n(above 20 dB)", "10-20 dB", "5-10 dB", "0-5 dB"]
    a = [4.1, 6.0, 11.5, 24.0]
    b = [5.0, 6.4, 9.2, 14.8]
    x = list(range(len(bands)))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(x, a, marker="o", label="Model A", color="tab:blue")
    ax.plot(x, b, marker="s", label="Model B", color="tab:orange", linestyle="--")
    for xi, ya, yb in zip(x, a, b):
        ax.annotate(f"{ya:.1f}", (xi, ya), textcoords="offset points", xytext=(0, 8 if ya >= yb else -14),
                    ha="center", fontsize=9, color="tab:blue")
        ax.annotate(f"{yb:.1f}", (xi, yb), textcoords="offset points", xytext=(0, 8 if yb > ya else -14),
                    ha="center", fontsize=9, color="tab:orange")
    ax.set_xticks(x)
    ax.set_xticklabels(bands)
    ax.set_ylim(0, 28)
    ax.set_xlabel("Signal-to-noise ratio band (noisier to the right)")
    ax.set_ylabel("Word error rate (%)")
    ax.set_title("WER by SNR band, two ASR models, same labeled test set")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(OUT / "01-wer-by-snr.png", dpi=DPI)
    plt.close(fig)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    fid_kid()
    mos()
    recall_at_k()
    wer_by_snr()


if __name__ == "__main__":
    main()
