"""Draw the Core ML exhibit images into fixtures/bank/exhibits/ (02-*.png).

    python3 tools/exhibits/02-core-ml.py    # needs matplotlib and numpy

02-noise-schedules.png: alpha-bar_t of the DDPM linear beta schedule (1e-4 to 0.02) and the
cosine schedule of Nichol & Dhariwal (2021, s = 0.008), T = 1000, for Q2024.
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


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    noise_schedules()
