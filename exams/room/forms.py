"""Input from the exam pages, validated before anything is written."""
from django import forms

from exams.letters import choice_label

# Where the no-JavaScript header's buttons go after saving, by name: a fixed list, never a URL.
LEAVE_PLACES = {
    "catalogue": ("exams:catalogue", "Exams"),
    "dashboard": ("exams:dashboard", "Dashboard"),
    "bookmarks": ("exams:bookmarks", "Bookmarks"),
    "profile": ("accounts:profile", "Profile"),
    "logout": (None, "Log out"),
}
REFUSED = "refused"  # input the learner can fix on the page: answered 422, never "Not saved"


class AnswerForm(forms.Form):
    """One slot's answer, named by position in this attempt (1 = the first choice shown)."""

    choice = forms.TypedMultipleChoiceField(coerce=int, required=False)
    go = forms.CharField(required=False, max_length=8)
    flag = forms.ChoiceField(required=False, choices=[("", ""), ("toggle", "toggle"), ("on", "on"), ("off", "off")])
    check = forms.BooleanField(required=False)
    # answer=1: the post carries this slot's whole answer (no choice at all means "clear it").
    answer = forms.BooleanField(required=False)
    # Strike-outs: the page's script sends the whole set (struck_sent=1 and every struck
    # position); a form without JavaScript sends one strike=<position> button to toggle.
    struck = forms.TypedMultipleChoiceField(coerce=int, required=False)
    struck_sent = forms.BooleanField(required=False)
    strike = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)
    # "How sure are you?" (issue 26): saved with the pick; absent or empty keeps what was saved.
    certainty = forms.ChoiceField(
        required=False, choices=[("", "")] + [(value, value) for value in ("guess", "fair", "sure")],
        error_messages={"invalid_choice": "How sure you are is one of guessing, fairly sure or sure; %(value)r is not. Nothing was changed."},
    )
    # Without JavaScript, the header's links are buttons of this form: save, then go to one of these places.
    leave = forms.ChoiceField(
        required=False, choices=[("", "")] + [(place, place) for place in LEAVE_PLACES],
        error_messages={"invalid_choice": "There is no place called %(value)r to go to (catalogue, dashboard, bookmarks, "
                        "profile or logout). Nothing was saved."},
    )
    # "Review flagged" / "Review unanswered": Next and Previous step through only those.
    walk = forms.ChoiceField(required=False, choices=[("", ""), ("flagged", "flagged"), ("unanswered", "unanswered")])

    def __init__(
        self, *args, choice_count: int, choose: int, slot_count: int, checkable: bool = False,
        uncheckable: str | None = None, **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.checkable = checkable
        self.uncheckable = uncheckable or "Answers in a timed mock are checked when it ends, not one by one."
        self.choose = choose
        self.slot_count = slot_count
        positions = [(str(n), choice_label(n - 1)) for n in range(1, choice_count + 1)]
        for name in ("choice", "struck", "strike"):
            self.fields[name].choices = positions
            self.fields[name].error_messages["invalid_choice"] = (
                "That choice is not one of this question's choices (they are "
                f"A–{choice_label(choice_count - 1)})."
            )

    def clean_choice(self) -> list[int]:
        picks = self.cleaned_data["choice"]
        if len(set(picks)) != len(picks):
            raise forms.ValidationError("Each choice can be picked once.")
        if len(picks) > self.choose:
            raise forms.ValidationError(
                f"This question takes {self.choose} choice{'s' if self.choose > 1 else ''}; "
                f"{len(picks)} were sent. Unpick one first.",
                code=REFUSED,
            )
        return sorted(picks)

    def clean_struck(self) -> set[int]:
        return set(self.cleaned_data["struck"])

    @property
    def refused(self) -> bool:
        """Whether every error is a refusal of well-formed input (422), not a malformed post (400)."""
        return bool(self.errors) and all(
            error.code == REFUSED for errors in self.errors.as_data().values() for error in errors
        )

    def clean_check(self) -> bool:
        if self.cleaned_data["check"] and not self.checkable:
            raise forms.ValidationError(self.uncheckable)
        return self.cleaned_data["check"]

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


REVIEW_SIZES = [("10", "10"), ("20", "20"), ("50", "50")]


class SessionForm(forms.Form):
    """Which untimed session to start: practice (any domain), a drill (one domain), a review of
    what is due, or "Practise my mistakes now" (a review of recent mistakes).

    A review's `size` is 10, 20 or 50; left out (an older page), the learner's saved size.
    """

    mode = forms.ChoiceField(choices=[
        ("practice", "Practice"), ("drill", "Domain drill"), ("review", "Review mistakes"), ("mistakes", "Practise my mistakes now"),
    ])
    domain = forms.ModelChoiceField(queryset=None, required=False, empty_label="All domains")
    count = forms.IntegerField(required=False, min_value=1, max_value=60, initial=10)
    size = forms.TypedChoiceField(
        choices=REVIEW_SIZES, coerce=int, required=False, empty_value=None,
        error_messages={"invalid_choice": "A review session takes 10, 20 or 50 questions: pick one of those."},
    )

    def __init__(self, *args, exam, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["domain"].queryset = exam.domains.all()
        self.fields["domain"].error_messages["invalid_choice"] = f"That domain is not one of {exam.code}'s."

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("mode") == "drill" and not cleaned.get("domain"):
            self.add_error("domain", "A drill needs a domain: pick one.")
        return cleaned

    def error_text(self) -> str:
        return " ".join(message for messages in self.errors.values() for message in messages)


