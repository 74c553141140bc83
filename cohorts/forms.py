"""The cohort form: its name, its exam, and the thresholds its flags use."""
from django import forms

from cohorts.models import Cohort
from exams.models import Exam


class CohortForm(forms.ModelForm):
    class Meta:
        model = Cohort
        fields = ["name", "exam", "needs_review_below", "at_risk_below"]
        labels = {"needs_review_below": "“Needs review” below (%)", "at_risk_below": "“At risk” below (%)"}
        help_texts = {
            "needs_review_below": "A member's mastery of a domain under this is flagged “needs review”.",
            "at_risk_below": "Under this, “at risk”. Fewer than 10 counted answers is never flagged.",
        }

    shares_results = forms.BooleanField(
        required=False,
        label="Ask members to share their mock results",
        help_text="The invitation asks each learner whether you may see their mock results: the score, the "
        "per-domain table and which questions they got right, wrong or left unanswered (never their notes). "
        "Each decides, and may withdraw it; without it you see the cohort report only.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["exam"].queryset = Exam.objects.filter(is_published=True).order_by("code")
        if self.instance.pk:
            # The report is about one exam's domains: a cohort keeps its exam.
            self.fields["exam"].disabled = True
            # The invitation asks, not the cohort: "Make a new link" chooses it again.
            del self.fields["shares_results"]

    def clean(self):
        cleaned = super().clean()
        at_risk, review = cleaned.get("at_risk_below"), cleaned.get("needs_review_below")
        if at_risk is not None and review is not None and at_risk > review:
            self.add_error("at_risk_below", f"“At risk” must be at most the “needs review” threshold ({review}%).")
        return cleaned
