"""Draw the Core ML exhibit images into fixtures/bank/exhibits/ (02-*.png).

    python3 tools/exhibits/02-core-ml.py    # needs matplotlib and numpy

02-noise-schedules.png: alpha-bar_t of the DDPM linear beta schedule (1e-4 to 0.02) and the
cosine schedule of Nichol & Dhariwal (2021, s = 0.008), T = 1000, for Q2024.
02-vae-kl-collapse.png: reconstruction and KL terms of a text VAE whose KL term collapses to
about zero after an early rise (illustrative curves, not a real run), for Q2104.
02-sliding-window-mask.png: a 12x12 causal sliding-window attention mask (window 4), for Q2121.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"
T = 1000


def linear_alpha_bar():
    betas = np.linspace(1e-4, 0.02, T)
    return np.cumprod(1.0 - betas)


def cosine_alpha_bar(s=0.008):
    t = np.arange(T + 1) / T
    f = np.cos((t + s) / (1 + s) * np.pi / 2) ** 2
    alpha_bar = f / f[0]
    betas = np.clip(1 - alpha_bar[1:] / alpha_bar[:-1], 0, 0.999)
    return np.cumprod(1.0 - betas)


def noise_schedules():
    steps = np.arange(1, T + 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    ax.plot(steps, linear_alpha_bar(), lw=2.2, color="#c0392b", label="Schedule A")
    ax.plot(steps, cosine_alpha_bar(), lw=2.2, color="#2471a3", ls="--", label="Schedule B")
    ax.set_xlim(0, T)
    ax.set_ylim(0, 1.02)
    ax.set_xticks(range(0, T + 1, 100))
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("timestep t")
    ax.set_ylabel("ᾱ_t (share of signal variance kept)")
    ax.set_title("Signal remaining in x_t over the forward process (T = 1000)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", frameon=True)
    fig.tight_layout()
    fig.savefig(OUT / "02-noise-schedules.png")
    plt.close(fig)


def vae_kl_collapse():
    steps = np.arange(0, 20001, 50)
    recon = 52 + 43 * np.exp(-steps / 4000.0)
    rise = 9.0 * (1 - np.exp(-steps / 250.0))
    fall = np.exp(-np.clip(steps - 1000, 0, None) / 450.0)
    kl = rise * fall + 0.03
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.2), dpi=100, sharex=True)
    top.plot(steps, recon, lw=2.2, color="#2471a3")
    top.set_ylabel("reconstruction\n(nats / sentence)")
    top.set_ylim(45, 100)
    top.set_title("Text VAE training: the two terms of the loss (KL weight = 1)")
    top.grid(alpha=0.3)
    bottom.plot(steps, kl, lw=2.2, color="#c0392b")
    bottom.set_ylabel("KL term\n(nats / sentence)")
    bottom.set_ylim(0, 10)
    bottom.set_xlabel("training step")
    bottom.set_xlim(0, 20000)
    bottom.set_xticks(range(0, 20001, 2500))
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "02-vae-kl-collapse.png")
    plt.close(fig)


def sliding_window_mask(n=12, window=4):
    mask = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if 0 <= i - j < window:
                mask[i, j] = 1
    fig, ax = plt.subplots(figsize=(6.0, 6.0), dpi=100)
    ax.imshow(mask, cmap="Blues", vmin=0, vmax=1.25)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(range(1, n + 1))
    ax.set_yticklabels(range(1, n + 1))
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
    ax.grid(which="minor", color="#888888", lw=0.6)
    ax.tick_params(which="minor", length=0)
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title("Shaded = may be attended", y=-0.08)
    fig.tight_layout()
    fig.savefig(OUT / "02-sliding-window-mask.png")
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    noise_schedules()
    vae_kl_collapse()
    sliding_window_mask()
