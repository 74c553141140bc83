"""Exhibit images for fixtures/bank/03-multimodal-data.json (Q3006, Q3007 and Q3103).

Run: python tools/exhibits/03-multimodal-data.py   (needs matplotlib and numpy)
"""
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"
RNG = np.random.default_rng(3)


def specaugment_masks():
    """Q3006: an 80-channel log-mel spectrogram of a 10 s utterance after augmentation,
    with two narrow frequency masks and one time mask about 4 s wide."""
    frames, mels = 1000, 80                      # 10 ms hop, 10 s
    t = np.arange(frames)
    # speech-like energy: syllable bursts with formant bands, louder at low mel channels
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * t / 23.0) ** 2
    pauses = np.ones(frames)
    for a, b in [(0, 30), (240, 275), (610, 640), (960, 1000)]:
        pauses[a:b] = 0.05
    base = np.linspace(1.0, 0.35, mels)[:, None]
    formants = np.zeros((mels, frames))
    for centre, width in [(12, 4), (28, 6), (45, 7)]:
        drift = centre + 3 * np.sin(2 * np.pi * t / 180.0)
        formants += np.exp(-((np.arange(mels)[:, None] - drift[None, :]) ** 2) / (2 * width ** 2))
    spec = base * (0.4 + formants) * envelope[None, :] * pauses[None, :]
    spec = 10 * np.log10(spec + 1e-3) + RNG.normal(0, 0.8, spec.shape)
    masked = spec.copy()
    fill = spec.mean()
    masked[18:26, :] = fill                      # frequency mask, 8 channels
    masked[52:58, :] = fill                      # frequency mask, 6 channels
    masked[:, 300:700] = fill                    # time mask, 400 frames = 4.0 s
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=100)
    im = ax.imshow(masked, origin="lower", aspect="auto", cmap="magma",
                   extent=[0, frames / 100.0, 0, mels])
    ax.set_xlabel("Time (s), 10 ms hop")
    ax.set_ylabel("Mel channel (0-79)")
    ax.set_title("Augmented log-mel features of one 10 s training utterance")
    ax.annotate("time mask 3.0-7.0 s", xy=(5.0, 70), ha="center", color="white", fontsize=10)
    ax.annotate("freq. mask", xy=(0.4, 21), color="white", fontsize=9)
    ax.annotate("freq. mask", xy=(0.4, 54), color="white", fontsize=9)
    fig.colorbar(im, ax=ax, label="dB (relative)")
    fig.tight_layout()
    fig.savefig(OUT / "03-specaugment-masks.png")
    plt.close(fig)


def merged_class_histogram():
    """Q3007: per-class image counts after merging two labeled sources."""
    classes = ["chair", "sofa", "couch", "table", "tv", "television", "lamp", "bed", "other"]
    source_a = [4200, 3100, 0, 3900, 2600, 0, 1800, 2300, 0]
    source_b = [3700, 0, 2900, 3500, 0, 2400, 1500, 2100, 6800]
    x = np.arange(len(classes))
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    ax.bar(x - 0.2, source_a, width=0.4, label="Source A (vendor 1)", color="#4C72B0")
    ax.bar(x + 0.2, source_b, width=0.4, label="Source B (vendor 2)", color="#DD8452")
    ax.set_xticks(x)
    ax.set_xticklabels(classes)
    ax.set_ylabel("Images per class")
    ax.set_xlabel("Class label as written in the merged annotation file")
    ax.set_title("Class counts after merging two furniture datasets")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "03-merged-class-counts.png")
    plt.close(fig)


def manifest_durations():
    """Q3103: durations in an ASR training manifest: a bulk of 2-15 s clips and a
    separate group of about 300 recordings lasting 3 to 45 minutes."""
    rng = np.random.default_rng(103)             # own generator: same image whether run alone or with the others
    short = np.clip(rng.gamma(shape=4.0, scale=1.9, size=180_000) + 1.5, 2, 15)
    long = rng.uniform(180, 2700, size=312)
    bins = np.logspace(np.log10(1), np.log10(3600), 60)
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    ax.hist(short, bins=bins, color="#4C72B0", label="clips (2-15 s)")
    ax.hist(long, bins=bins, color="#C44E52", label="long recordings (3-45 min)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 5, 10, 20, 60, 180, 600, 1800, 3600])
    ax.set_xticklabels(["1 s", "2 s", "5 s", "10 s", "20 s", "1 min", "3 min", "10 min", "30 min", "60 min"])
    ax.set_xlabel("Manifest duration (log scale)")
    ax.set_ylabel("Number of entries (log scale)")
    ax.set_title("Durations in the ASR training manifest (180,312 entries)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "03-manifest-durations.png")
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    specaugment_masks()
    merged_class_histogram()
    manifest_durations()
