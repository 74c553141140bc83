#!/usr/bin/env python3
"""Exhibit images for fixtures/bank/05-data-analysis.json (Data Analysis and Visualization).

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install matplotlib numpy
    /tmp/venv/bin/python tools/exhibits/05-data-analysis.py

Writes PNGs (about 100 dpi, each well under 500 KB) into fixtures/bank/exhibits/. All data is
synthetic and fixed (seeded), so the images and the numbers the questions quote stay the same.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"
DPI = 100


def save(fig, name):
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    print(f"{path.name}: {path.stat().st_size // 1024} KB")


def reliability_diagram():
    """Q5001: a classifier whose accuracy is below its confidence in every bin (overconfident)."""
    edges = np.linspace(0, 1, 11)
    # bins 0.2-0.3 … 0.9-1.0: mean confidence, accuracy, count (10,000 validation images)
    conf = np.array([0.27, 0.35, 0.45, 0.55, 0.65, 0.75, 0.86, 0.96])
    acc = np.array([0.22, 0.28, 0.36, 0.43, 0.50, 0.58, 0.68, 0.79])
    count = np.array([40, 90, 160, 260, 420, 700, 1400, 6930])
    ece = float(np.sum(count / count.sum() * np.abs(acc - conf)))
    lefts = edges[2:10]

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 7.2), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.2]})
    top.bar(lefts, acc, width=0.1, align="edge", color="#4C72B0", edgecolor="black", label="Accuracy in bin")
    top.bar(lefts, conf - acc, bottom=acc, width=0.1, align="edge", color="#DD8452", alpha=0.55,
            edgecolor="black", hatch="//", label="Gap to mean confidence")
    top.plot([0, 1], [0, 1], "k--", linewidth=1.2, label="Perfect calibration")
    top.set_ylabel("Accuracy (fraction correct)")
    top.set_ylim(0, 1)
    top.set_xlim(0, 1)
    top.grid(alpha=0.3)
    top.legend(loc="upper left", fontsize=9)
    top.set_title(f"Reliability diagram, validation set (10,000 images), ECE = {ece:.2f}")
    bottom.bar(lefts, count, width=0.1, align="edge", color="#55A868", edgecolor="black")
    bottom.set_ylabel("Images in bin")
    bottom.set_xlabel("Top-1 confidence (10 equal-width bins)")
    bottom.set_xticks(edges)
    bottom.grid(alpha=0.3)
    for x, n in zip(lefts, count):
        bottom.text(x + 0.05, n + 120, f"{n}", ha="center", fontsize=8)
    bottom.set_ylim(0, 8200)
    save(fig, "05-reliability-diagram.png")


def scree_plot():
    """Q5004: PCA of 768-d image embeddings; the first two components hold about 22% of the variance."""
    head = np.array([0.13, 0.09, 0.07, 0.06, 0.055])
    k = np.arange(6, 769)
    tail = np.exp(-(k - 6) / 11.0) + 0.004 * (k / 6.0) ** -1.0
    tail = tail / tail.sum() * (1 - head.sum())
    ratio = np.concatenate([head, tail])
    cumulative = np.cumsum(ratio)
    k90 = int(np.argmax(cumulative >= 0.90)) + 1
    shown = 40
    xs = np.arange(1, shown + 1)

    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.bar(xs, ratio[:shown], color="#4C72B0", label="Explained variance ratio (per component)")
    ax.set_xlabel("Principal component")
    ax.set_ylabel("Explained variance ratio")
    ax.set_ylim(0, 0.14)
    ax.set_xticks([1, 2, 5, 10, 15, 20, 25, 30, 35, 40])
    ax2 = ax.twinx()
    ax2.plot(xs, cumulative[:shown], "o-", color="#C44E52", markersize=3, label="Cumulative explained variance")
    ax2.axhline(0.90, color="gray", linestyle="--", linewidth=1)
    ax2.text(36, 0.865, "90%", color="gray")
    ax2.annotate(f"{cumulative[1]:.0%} after 2 components", xy=(2, cumulative[1]), xytext=(9, 0.36),
                 arrowprops={"arrowstyle": "->"}, bbox={"facecolor": "white", "edgecolor": "none"})
    ax2.annotate(f"90% reached at component {k90}", xy=(k90, cumulative[k90 - 1]), xytext=(20, 0.70),
                 arrowprops={"arrowstyle": "->"}, bbox={"facecolor": "white", "edgecolor": "none"})
    ax2.set_ylim(0, 1.0)
    ax2.set_ylabel("Cumulative explained variance")
    ax.grid(axis="y", alpha=0.3)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="center right", fontsize=9)
    ax.set_title("PCA scree plot: 200,000 image embeddings (768 dimensions), first 40 components")
    save(fig, "05-pca-scree.png")
    return k90, cumulative[1], cumulative[shown - 1]


def drift_dashboard():
    """Q5023: weekly cycle in confidence and traffic, plus a level shift in confidence at an app release."""
    rng = np.random.default_rng(5)
    days = np.arange(56)
    start = np.datetime64("2026-03-02")  # a Monday
    dates = start + days
    weekend = np.isin(days % 7, [5, 6])
    release = 35  # 2026-04-06, a Monday
    confidence = 0.86 - 0.02 * weekend + rng.normal(0, 0.004, days.size)
    confidence[release:] -= 0.11
    volume = 120 - 40 * weekend + rng.normal(0, 4, days.size)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.8), sharex=True)
    top.plot(dates, confidence, "o-", color="#4C72B0", markersize=3)
    top.set_ylabel("Mean top-1 confidence")
    top.set_ylim(0.6, 0.95)
    top.set_title("Image-tagging service: daily production metrics")
    bottom.bar(dates, volume, color="#8172B2")
    bottom.set_ylabel("Requests per day (thousands)")
    bottom.set_ylim(0, 150)
    for ax in (top, bottom):
        ax.axvline(dates[release], color="#C44E52", linestyle="--")
        ax.grid(alpha=0.3)
    top.text(dates[release] + np.timedelta64(1, "D"), 0.91, "mobile app v5.2 released", color="#C44E52")
    bottom.set_xlabel("Date (shaded: weekends)")
    for ax in (top, bottom):
        for d in days[weekend]:
            ax.axvspan(dates[d] - np.timedelta64(12, "h"), dates[d] + np.timedelta64(12, "h"),
                       color="gray", alpha=0.12, linewidth=0)
    fig.autofmt_xdate()
    save(fig, "05-drift-dashboard.png")


def per_group_wer():
    """Q5028: WER by accent group with 95% confidence intervals and group sizes."""
    groups = ["US English", "UK English", "Indian English", "Nigerian English", "Scottish English"]
    n = [4200, 1900, 1500, 90, 60]
    wer = np.array([8.1, 9.0, 14.2, 17.5, 6.9])
    half = np.array([0.5, 0.8, 1.1, 5.5, 3.9])
    overall = 9.6

    fig, ax = plt.subplots(figsize=(8.2, 4.8))
    xs = np.arange(len(groups))
    ax.bar(xs, wer, color="#4C72B0", yerr=half, capsize=6, ecolor="black")
    ax.axhline(overall, color="#C44E52", linestyle="--", label=f"All test clips: WER {overall}%")
    for x, w, h, count in zip(xs, wer, half, n):
        ax.text(x, w + h + 0.6, f"{w}%\n(n = {count:,})", ha="center", fontsize=9,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.set_xticks(xs, groups)
    ax.set_ylabel("Word error rate (%)")
    ax.set_ylim(0, 28)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left")
    ax.set_title("Speech recognizer WER by speaker accent (error bars: 95% confidence intervals)")
    save(fig, "05-per-group-wer.png")


def audio_clip():
    """Q5016: a 16 kHz clip with clipping at 2.0-3.5 s, digital silence from 4.5 s, content below 4 kHz."""
    rng = np.random.default_rng(16)
    sr = 16_000
    t = np.arange(int(6.0 * sr)) / sr
    f0 = 140 + 25 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    voice = sum((1.0 / h) * np.sin(h * phase) for h in range(1, 27) if h * 165 < 3900)
    syllables = 0.5 * (1 + np.sin(2 * np.pi * 3.2 * t)) ** 2
    signal = voice * syllables
    signal = signal / np.max(np.abs(signal)) * 0.45
    signal += rng.normal(0, 0.004, t.size)
    signal[t < 0.4] = rng.normal(0, 0.004, np.sum(t < 0.4))
    spectrum = np.fft.rfft(signal)  # band-limit to 4 kHz, as audio first recorded at 8 kHz would be
    spectrum[np.fft.rfftfreq(signal.size, 1 / sr) > 3950] = 0
    signal = np.fft.irfft(spectrum, n=signal.size)
    loud = (t >= 2.0) & (t < 3.5)
    signal[loud] *= 3.2
    signal = np.clip(signal, -1.0, 1.0)
    signal[t >= 4.5] = rng.normal(0, 0.0003, np.sum(t >= 4.5))

    n_fft, hop = 512, 128
    window = np.hanning(n_fft)
    frames = np.lib.stride_tricks.sliding_window_view(signal, n_fft)[::hop] * window
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    db = 10 * np.log10(power + 1e-10)
    db = np.maximum(db, db.max() - 80)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.4), sharex=True)
    top.plot(t, signal, color="#4C72B0", linewidth=0.4)
    top.set_ylabel("Amplitude (full scale = ±1.0)")
    top.set_ylim(-1.15, 1.15)
    top.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    top.axhline(-1.0, color="gray", linestyle=":", linewidth=1)
    top.grid(alpha=0.3)
    top.set_title("Training clip 000731.wav (sample rate 16 kHz): waveform and spectrogram")
    img = bottom.imshow(db.T, origin="lower", aspect="auto", cmap="magma",
                        extent=[0, signal.size / sr, 0, sr / 2000])
    bottom.set_ylabel("Frequency (kHz)")
    bottom.set_xlabel("Time (s)")
    bottom.set_yticks([0, 1, 2, 3, 4, 5, 6, 7, 8])
    cbar = fig.colorbar(img, ax=[top, bottom], pad=0.01, fraction=0.03)
    cbar.set_label("Power (dB)")
    save(fig, "05-audio-clip.png")


def pr_operating_points():
    """Q5106: a defect detector's PR curve with five marked thresholds; only 0.35 meets recall >= 0.90 and precision >= 0.67."""
    points = [  # threshold, recall, precision
        (0.90, 0.62, 0.97), (0.70, 0.80, 0.93), (0.50, 0.88, 0.85), (0.35, 0.92, 0.71), (0.20, 0.96, 0.48),
    ]
    # A smooth curve through the marked points, from low recall to recall 1.0.
    rec = np.array([0.0, 0.30, 0.50, 0.62, 0.80, 0.88, 0.92, 0.96, 1.0])
    prec = np.array([1.00, 0.995, 0.985, 0.97, 0.93, 0.85, 0.71, 0.48, 0.30])
    fine = np.linspace(0, 1, 300)
    curve = np.interp(fine, rec, prec)

    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    ax.plot(fine, curve, color="#4C72B0", linewidth=2, label="Precision-recall curve (8,000 validation images)")
    ax.axvline(0.90, color="#C44E52", linestyle="--", linewidth=1.2, label="Recall 0.90")
    ax.axhline(0.67, color="#55A868", linestyle="--", linewidth=1.2, label="Precision 0.67")
    offsets = {0.90: (-0.20, -0.06), 0.70: (-0.20, -0.07), 0.50: (-0.22, -0.05), 0.35: (-0.27, -0.13), 0.20: (-0.24, -0.03)}
    for t, r, p in points:
        ax.plot(r, p, "o", color="black", markersize=6)
        dx, dy = offsets[t]
        ax.annotate(f"threshold {t:.2f}\nrecall {r:.2f}, precision {p:.2f}", xy=(r, p), xytext=(r + dx, p + dy),
                    fontsize=8.5, arrowprops=dict(arrowstyle="-", color="#777777", linewidth=0.8))
    ax.set_xlim(0.4, 1.0)
    ax.set_ylim(0.3, 1.02)
    ax.set_xlabel("Recall (share of defective parts caught)")
    ax.set_ylabel("Precision (share of alerts that are real defects)")
    ax.set_title("Defect detector: precision-recall curve with marked thresholds", fontsize=11)
    ax.legend(loc="lower left", fontsize=8.5)
    ax.grid(alpha=0.3)
    save(fig, "05-pr-operating-points.png")


if __name__ == "__main__":
    reliability_diagram()
    print("scree: k90 = %d, first two = %.3f, cumulative at 40 = %.3f" % scree_plot())
    drift_dashboard()
    per_group_wer()
    audio_clip()
    pr_operating_points()
