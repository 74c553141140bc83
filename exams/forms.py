"""Input from the exam pages, validated before anything is written."""
import string

from django import forms

LETTERS = string.ascii_uppercase


class AnswerForm(forms.Form):
    """One slot's answer, named by position in this attempt (1 = the first choice shown)."""

    choice = forms.TypedMultipleChoiceField(coerce=int, required=False)
    go = forms.CharField(required=False, max_length=8)
    flag = forms.ChoiceField(required=False, choices=[("", ""), ("toggle", "toggle"), ("on", "on"), ("off", "off")])

    def __init__(self, *args, choice_count: int, choose: int, slot_count: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.choose = choose
        self.slot_count = slot_count
        self.fields["choice"].choices = [(str(n), LETTERS[n - 1]) for n in range(1, choice_count + 1)]
        self.fields["choice"].error_messages["invalid_choice"] = (
            "That choice is not one of this question's choices (they are "
            f"{LETTERS[0]}–{LETTERS[choice_count - 1]})."
        )

    def clean_choice(self) -> list[int]:
        picks = self.cleaned_data["choice"]
        if len(set(picks)) != len(picks):
            raise forms.ValidationError("Each choice can be picked once.")
        if len(picks) > self.choose:
            raise forms.ValidationError(
                f"This question takes {self.choose} choice{'s' if self.choose > 1 else ''}; "
                f"{len(picks)} were sent. Unpick one first."
            )
        return sorted(picks)

    def clean_go(self) -> str | int | None:
        go = self.cleaned_data["go"]
        if go in ("", None):
            return None
        if go in ("prev", "next", "review", "stay"):
            return go
        if go.isdigit() and 1 <= int(go) <= self.slot_count:
            return int(go)
        raise forms.ValidationError(f"There is no question {go!r} in this attempt (1–{self.slot_count}).")

    def error_text(self) -> str:
        return " ".join(message for messages in self.errors.values() for message in messages)
