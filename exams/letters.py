"""A choice's letter as learners and instructors see it: every layer may import this."""
import string


def choice_label(index: int) -> str:
    """A, B, … Z, then AA, AB, … for the index-th (0-based) choice."""
    letters = string.ascii_uppercase
    if index < len(letters):
        return letters[index]
    return letters[index // len(letters) - 1] + letters[index % len(letters)]
