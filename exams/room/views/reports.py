"""Report a problem with a question the learner has answered: it becomes a dispute on its erratum."""
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from exams.bank.errata.disputes import dispute_report
from exams.letters import choice_label
from exams.models import Dispute, ErratumStatus
from exams.room.access import owned_attempt


class ReportForm(forms.Form):
    choice = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple)
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}), max_length=2000, label="What is wrong with this question?",
        help_text="E.g. the key looks wrong, two answers are right, the wording is unclear. Up to 2,000 characters.",
    )

    def __init__(self, *args, options: list[tuple[int, str]], choose: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.choose = choose
        field = self.fields["choice"]
        field.choices = [(str(position), label) for position, label in options]
        many = "s" if choose > 1 else ""
        field.label = f"The answer{many} you believe {'are' if choose > 1 else 'is'} right (optional)"
        field.help_text = (
            f"This question takes {choose} choice{many}: tick up to {choose}, in the letters you saw. Tick none if you "
            "have no opinion."
        )

    def clean_choice(self) -> list[int]:
        picked = self.cleaned_data["choice"]
        if len(picked) > self.choose:
            raise forms.ValidationError(
                f"This question takes {self.choose} choice{'s' if self.choose > 1 else ''}: tick at most {self.choose} "
                f"(you ticked {len(picked)})."
            )
        return picked


@login_required
def report(request: HttpRequest, attempt_id: int, position: int) -> HttpResponse:
    attempt = owned_attempt(request.user, attempt_id)
    response = attempt.responses.select_related("version", "question").filter(position=position).first()
    if response is None:
        raise Http404("No such question in this attempt.")
    question_url = reverse("exams:question", args=[attempt.pk, position])
    results_url = reverse("exams:results", args=[attempt.pk])
    if not (attempt.is_finished or response.checked_at):
        # Keys stay hidden during an attempt, so problems are reported once it is answered and seen.
        messages.error(request, "You can report a problem once you have checked this answer or finished the attempt.")
        return redirect(question_url)
    options = [
        (index, f"{choice_label(index - 1)}. {response.version.choice_text(choice_id)}")
        for index, choice_id in enumerate(response.choice_order, start=1)
    ]
    existing = (
        Dispute.objects.filter(learner=request.user, erratum__question=response.question, erratum__status=ErratumStatus.REPORTED)
        .first()
    )
    initial = {}
    if existing is not None:
        initial = {
            "reason": existing.reason,
            "choice": [
                response.choice_order.index(choice.pk) + 1 for choice in existing.choices.all() if choice.pk in response.choice_order
            ],
        }
    form = ReportForm(request.POST or None, options=options, choose=response.question.choose, initial=initial)
    if request.method == "POST" and form.is_valid():
        choice_ids = [response.choice_order[position - 1] for position in form.cleaned_data["choice"]]
        dispute_report(user=request.user, response=response, choice_ids=choice_ids, reason=form.cleaned_data["reason"])
        messages.success(request, "Thank you: your report is with the instructors. You can edit it until they decide.")
        return redirect(results_url if attempt.is_finished else question_url)
    return render(
        request,
        "exams/report.html",
        {"attempt": attempt, "response": response, "form": form, "existing": existing, "back": results_url if attempt.is_finished else question_url},
    )
