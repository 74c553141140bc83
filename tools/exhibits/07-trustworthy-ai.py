"""Exhibit images for fixtures/bank/07-trustworthy-ai.json (Q7106).

Run: python tools/exhibits/07-trustworthy-ai.py   (needs matplotlib and numpy)
"""
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"


def wer_by_accent():
    """Q7106: word error rate per speaker group for two candidate ASR models,
    with the pooled figure and the number of test utterances per group."""
    groups = ["US English\n(n=6,000)", "UK English\n(n=2,500)", "Indian English\n(n=1,500)",
              "Scottish English\n(n=600)", "Nigerian English\n(n=1,200)"]
    model_a = [4.6, 5.4, 9.8, 14.2, 21.4]
    model_b = [6.6, 7.2, 9.6, 9.9, 10.8]
    x = np.arange(len(groups))
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=100)
    bars_a = ax.bar(x - 0.2, model_a, width=0.4, label="Model A (pooled WER 7.6%)", color="#4C72B0")
    bars_b = ax.bar(x + 0.2, model_b, width=0.4, label="Model B (pooled WER 7.7%)", color="#DD8452")
    for bars in (bars_a, bars_b):
        for bar in bars:
            ax.annotate(f"{bar.get_height():.1f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=9)
    ax.set_xticks(x)
    ax.set_xticklabels(groups)
    ax.set_ylabel("Word error rate (%)")
    ax.set_title("Test WER by speaker group for two candidate ASR models (11,800 utterances)")
    ax.legend(loc="upper left")
    ax.set_ylim(0, 25)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "07-wer-by-accent.png")
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    wer_by_accent()
