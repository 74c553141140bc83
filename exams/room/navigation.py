"""Where a move goes: Next, Previous, a numbered slot, or a walk through the flagged or unanswered ones."""



WALKS = {"flagged": "flagged", "unanswered": "unanswered"}


def walk_positions(navigator: list[dict], walk: str) -> list[int]:
    """The slots a walk visits: the flagged ones, or those unanswered or incomplete."""
    if walk == "flagged":
        return [slot["position"] for slot in navigator if slot["flagged"]]
    return [slot["position"] for slot in navigator if not slot["answered"] or slot["incomplete"]]


def go_target(go, position: int, slot_count: int, *, walk: list[int] | None = None) -> int | str:
    """The slot to show after a save: the one asked for, or this one. Walking the flagged or
    unanswered slots, Next and Previous step through only those; past the last, the review."""
    if walk is not None:
        if go == "next":
            return next((p for p in walk if p > position), "review")
        return next((p for p in reversed(walk) if p < position), position)
    if go == "prev":
        return max(1, position - 1)
    if go == "next":
        return min(slot_count, position + 1)
    return go if isinstance(go, int) else position
