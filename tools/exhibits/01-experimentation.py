#!/usr/bin/env python3
"""Exhibit images for fixtures/bank/01-experimentation.json (Experimentation, design).

The numbers are illustrative: they are drawn to show the pattern each question asks about,
not measured on a real model. Run with a Python that has matplotlib and numpy:

    python tools/exhibits/01-experimentation.py
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"


def guidance_sweep():
    scales = np.array([1, 2, 3, 5, 7.5, 10, 15, 20])
    clip = np.array([0.241, 0.268, 0.284, 0.301, 0.309, 0.312, 0.314, 0.314])
    fid = np.array([38.5, 26.0, 21.4, 18.9, 20.7, 25.8, 34.2, 42.6])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(scales, clip, "o-", color="tab:blue")
    left.set_xlabel("guidance scale")
    left.set_ylabel("mean CLIP score (higher = closer to prompt)")
    left.set_title("Prompt alignment")
    right.plot(scales, fid, "s-", color="tab:red")
    right.set_xlabel("guidance scale")
    right.set_ylabel("FID vs. held-out photos (lower = more realistic)")
    right.set_title("Realism and variety")
    for ax in (left, right):
        ax.set_xticks(scales)
        ax.set_xticklabels([f"{s:g}" for s in scales])
        ax.grid(alpha=0.3)
    fig.suptitle("Guidance-scale sweep: 5,000 prompts, one fixed seed per prompt, 25 sampling steps")
    fig.tight_layout()
    fig.savefig(OUT / "01-guidance-sweep.png", dpi=100)
    plt.close(fig)


def lr_sweep():
    lrs = np.array([1e-5, 3e-5, 1e-4, 3e-4, 1e-3])
    mean = np.array([2.10, 1.85, 1.62, 1.58, 1.71])
    spread = np.array([0.01, 0.02, 0.03, 0.04, 0.12])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.errorbar(lrs, mean, yerr=spread, fmt="o-", capsize=4, color="tab:green", label="mean ± range over 3 seeds")
    ax.scatter([3e-3], [2.35], marker="x", s=120, color="black", label="3e-3: loss became NaN (all 3 seeds)")
    ax.annotate("diverged", (3e-3, 2.35), textcoords="offset points", xytext=(-20, 10))
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate (log scale)")
    ax.set_ylabel("validation loss after 2,000 steps")
    ax.set_title("Learning-rate sweep for a LoRA fine-tune (warm-up 100 steps, cosine decay)")
    ax.set_ylim(1.4, 2.5)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper center")
    fig.tight_layout()
    fig.savefig(OUT / "01-lr-sweep.png", dpi=100)
    plt.close(fig)


def data_size_curves():
    sizes = np.array([250, 500, 1000, 2000, 4000, 8000, 16000])
    cnn = np.array([61.0, 68.0, 73.0, 77.0, 80.0, 82.0, 83.0])
    vit = np.array([52.0, 60.0, 67.0, 74.0, 79.5, 84.0, 87.0])
    spread = np.array([2.0, 1.6, 1.2, 0.9, 0.7, 0.6, 0.5])
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.errorbar(sizes, cnn, yerr=spread, fmt="o-", capsize=4, color="tab:blue",
                label="Model A: ResNet-50, ImageNet-pretrained, fine-tuned")
    ax.errorbar(sizes, vit, yerr=spread, fmt="s-", capsize=4, color="tab:orange",
                label="Model B: ViT-B/16, ImageNet-pretrained, fine-tuned")
    for x, a, b in zip(sizes, cnn, vit):
        up, down = (10, -18) if a >= b else (-18, 10)
        ax.annotate(f"{a:g}", (x, a), textcoords="offset points", xytext=(-12, up), ha="center", color="tab:blue", fontsize=9)
        ax.annotate(f"{b:g}", (x, b), textcoords="offset points", xytext=(12, down), ha="center", color="tab:orange", fontsize=9)
    ax.set_xscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"{s:,}" for s in sizes])
    ax.set_xlabel("labeled training images (log scale)")
    ax.set_ylabel("test accuracy (%), mean of 3 seeds, bars = range")
    ax.set_title("Test accuracy against training-set size, same test set for every point")
    ax.set_ylim(45, 92)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(OUT / "01-data-size-curves.png", dpi=100)
    plt.close(fig)


def random_search_edge():
    rng = np.random.default_rng(7)
    lr = 10 ** rng.uniform(-4, -2, 40)
    decay = rng.uniform(0.0, 0.1, 40)
    loss = 1.30 + 0.42 * (np.log10(lr) + 4) + rng.normal(0, 0.04, 40)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.axvspan(1e-4, 1e-2, color="0.93", label="search range for the learning rate")
    points = ax.scatter(lr, loss, c=decay, cmap="viridis", s=40, edgecolors="black", linewidths=0.4)
    best = np.argsort(loss)[:5]
    ax.scatter(lr[best], loss[best], s=160, facecolors="none", edgecolors="red", linewidths=1.5,
               label="five best trials")
    fig.colorbar(points, ax=ax, label="weight decay (searched 0 to 0.1)")
    ax.set_xscale("log")
    ax.set_xlim(3e-5, 3e-2)
    ax.set_xlabel("learning rate (log scale)")
    ax.set_ylabel("validation loss after the fixed budget")
    ax.set_title("Random search, 40 trials, same budget and validation set for each")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(OUT / "01-random-search-edge.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    guidance_sweep()
    lr_sweep()
    data_size_curves()
    random_search_edge()
