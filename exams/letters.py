"""A choice's letter as learners and instructors see it: every layer may import this."""
import string


def choice_label(index: int) -> str:
    """A, B, … Z, then AA, AB, … ZZ, AAA, … for the index-th (0-based) choice, as spreadsheets
    name columns: any index has a letter, so a question past the bounds (703 choices, the
    703rd is AAA) is shown and named, never a crash."""
    letters = string.ascii_uppercase
    label = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, len(letters))
        label = letters[remainder] + label
    return label
