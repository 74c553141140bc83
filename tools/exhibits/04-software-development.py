"""Draw the image exhibits of fixtures/bank/04-software-development.json (Software Development).

Writes into fixtures/bank/exhibits/:
- 04-ensemble-mapping.png: the `ensemble_scheduling` steps of a Triton ensemble drawn as boxes,
  each with its `input_map` and `output_map` entries (model tensor -> ensemble tensor). The
  detector step reads an ensemble tensor that no step produces. For question 4113.
- 04-streaming-through-proxy.png: tokens received by a client over time for one streamed
  800-token reply, sent directly to a NIM and through a buffering reverse proxy. For question 4135.

The data are illustrative, made up to show one pattern clearly. Needs matplotlib.
Run: python tools/exhibits/04-software-development.py
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "bank" / "exhibits"


def box(ax, x, y, w, h, title, lines, face):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=face, edgecolor="#333333", linewidth=1.2))
    ax.text(x + w / 2, y + h - 0.22, title, ha="center", va="top", fontsize=11, fontweight="bold")
    for i, (text, color) in enumerate(lines):
        ax.text(x + 0.15, y + h - 0.75 - i * 0.42, text, ha="left", va="top", fontsize=9.5,
                family="monospace", color=color)


def arrow(ax, start, end, label=None):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, linewidth=1.4, color="#333333"))
    if label:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.18, label, ha="center", va="bottom",
                fontsize=9, family="monospace", color="#1f4e79")


def ensemble_mapping():
    fig, ax = plt.subplots(figsize=(12, 4.6), dpi=100)
    ax.set_xlim(0, 15.2)
    ax.set_ylim(0, 4.6)
    ax.axis("off")
    ax.set_title('Triton ensemble "doc_tagger": ensemble_scheduling steps (each map entry shown as  key → value)',
                 fontsize=11)
    # ensemble input and output
    ax.text(0.55, 2.35, "ensemble input\nRAW_IMAGE", ha="center", va="center", fontsize=9.5, family="monospace",
            bbox=dict(boxstyle="round", facecolor="#eeeeee", edgecolor="#666666"))
    ax.text(14.55, 2.35, "ensemble output\nTAGS", ha="center", va="center", fontsize=9.5, family="monospace",
            bbox=dict(boxstyle="round", facecolor="#eeeeee", edgecolor="#666666"))
    black = "#111111"
    box(ax, 1.35, 1.0, 3.7, 2.7, "step 1: preprocess (python)",
        [("input_map:", black), ("  IMAGE_BYTES → RAW_IMAGE", black), ("output_map:", black),
         ("  PIXELS_OUT → pixels", black)], "#e8f1fb")
    box(ax, 5.75, 1.0, 3.7, 2.7, "step 2: detector (onnxruntime)",
        [("input_map:", black), ("  images → pixel_values  ?", "#b22222"), ("output_map:", black),
         ("  boxes → det_boxes", black)], "#fdf1e3")
    box(ax, 10.15, 1.0, 3.3, 2.7, "step 3: postprocess (python)",
        [("input_map:", black), ("  BOXES → det_boxes", black), ("output_map:", black),
         ("  TAGS → TAGS", black)], "#eaf6ea")
    arrow(ax, (1.05, 2.35), (1.33, 2.35))
    arrow(ax, (5.07, 2.35), (5.73, 2.35))
    arrow(ax, (9.47, 2.35), (10.13, 2.35))
    arrow(ax, (13.47, 2.35), (13.85, 2.35))
    fig.tight_layout()
    fig.savefig(OUT / "04-ensemble-mapping.png")
    plt.close(fig)


def streaming_through_proxy():
    fig, ax = plt.subplots(figsize=(9, 4.6), dpi=100)
    # direct: first token at 0.3 s, then about 92 tokens per second until 800 tokens at about 9 s
    t_direct = [0.0, 0.3] + [0.3 + i * 0.1 for i in range(1, 88)]
    n_direct = [0, 1] + [min(800, round(1 + i * 9.1)) for i in range(1, 88)]
    ax.plot(t_direct, n_direct, color="#1f77b4", linewidth=2.2, label="Direct to NIM")
    # through the proxy: nothing until the upstream response completes, then everything at once
    t_proxy = [0.0, 9.2, 9.2, 11.0]
    n_proxy = [0, 0, 800, 800]
    ax.plot(t_proxy, n_proxy, color="#d62728", linewidth=2.2, linestyle="--", label="Through reverse proxy")
    ax.annotate("first token at ≈0.3 s", xy=(0.3, 1), xytext=(1.2, 180), fontsize=9,
                arrowprops=dict(arrowstyle="->", color="#1f77b4"))
    ax.annotate("all 800 tokens at ≈9.2 s", xy=(9.2, 800), xytext=(5.6, 700), fontsize=9,
                arrowprops=dict(arrowstyle="->", color="#d62728"))
    ax.set_xlim(0, 11)
    ax.set_ylim(-20, 860)
    ax.set_xlabel("time since request sent (s)")
    ax.set_ylabel("tokens received by the client")
    ax.set_title("One streamed 800-token reply (stream=True), same prompt, two network paths", fontsize=11)
    ax.grid(linestyle=":", alpha=0.6)
    ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(OUT / "04-streaming-through-proxy.png")
    plt.close(fig)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    ensemble_mapping()
    streaming_through_proxy()
