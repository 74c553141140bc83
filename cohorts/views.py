"""Cohort pages under /cohorts/: instructors run their own cohorts; learners join, see and leave theirs."""
from decimal import Decimal
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_POST

from cohorts import report, results, services
from cohorts.access import sharing_memberships
from cohorts.forms import CohortForm
from cohorts.models import Cohort, Invitation, Membership
from exams import csvcells

# The permission the Instructors group has (migration cohorts 0002) and learners do not.
RUN_COHORTS = "cohorts.add_cohort"


def instructor_required(view):
    @wraps(view)
    @login_required
    def guarded(request, *args, **kwargs):
        if not request.user.has_perm(RUN_COHORTS):
            raise PermissionDenied("Only instructors run cohorts.")
        return view(request, *args, **kwargs)

    return guarded


def owned_cohort(user, cohort_id: int) -> Cohort:
    """The cohort if this instructor owns it; 404 for anyone else (another instructor included)."""
    return get_object_or_404(Cohort.objects.select_related("exam"), pk=cohort_id, owner_id=user.pk)


@login_required
def index(request: HttpRequest) -> HttpResponse:
    """My cohorts: those I run (instructors) and those I am a member of."""
    context = {
        "memberships": Membership.objects.filter(learner=request.user)
        .select_related("cohort__exam", "cohort__owner")
        .order_by("cohort__name", "pk"),
        "runs_cohorts": request.user.has_perm(RUN_COHORTS),
    }
    if context["runs_cohorts"]:
        context["owned"] = Cohort.objects.filter(owner=request.user).select_related("exam").annotate(
            members=Count("memberships")
        )
    return render(request, "cohorts/index.html", context)


@instructor_required
def create(request: HttpRequest) -> HttpResponse:
    form = CohortForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        cohort = services.cohort_create(owner=request.user, form=form, shares_results=form.cleaned_data["shares_results"])
        messages.success(request, f"Cohort “{cohort.name}” created. Share its invitation link with your learners.")
        return redirect("cohorts:detail", cohort_id=cohort.pk)
    return render(request, "cohorts/form.html", {"form": form, "title": "New cohort"})


@instructor_required
def edit(request: HttpRequest, cohort_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    form = CohortForm(request.POST or None, instance=cohort)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Cohort settings saved.")
        return redirect("cohorts:detail", cohort_id=cohort.pk)
    return render(request, "cohorts/form.html", {"form": form, "title": f"Settings of {cohort.name}", "cohort": cohort})


@instructor_required
def detail(request: HttpRequest, cohort_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    invitation = Invitation.objects.usable().filter(cohort=cohort).first()
    context = {
        "cohort": cohort,
        "invitation": invitation,
        "invitation_url": request.build_absolute_uri(reverse("cohorts:join", args=[invitation.token])) if invitation else None,
        "min_counted": report.MIN_COUNTED,
        **report.cohort_report(cohort=cohort, page=request.GET.get("page"), sort=request.GET.get("sort")),
    }
    return render(request, "cohorts/detail.html", context)


@instructor_required
def export_csv(request: HttpRequest, cohort_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    domains, rows = report.all_rows(cohort=cohort)
    response = HttpResponse(
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": content_disposition_header(as_attachment=True, filename=f"cohort-{cohort.pk}.csv")},
    )
    writer = csvcells.Writer(response)
    header = ["learner", "joined", "mocks", "last_mock_score", "last_mock_passed", "last_mock_finished", "best_mock_score"]
    for domain in domains:
        header += [f"{domain.name} mastery", f"{domain.name} counted", f"{domain.name} flag"]
    writer.writerow(header)
    for row in rows:
        line = [
            row.membership.learner.get_username(),
            row.membership.joined_at.date().isoformat(),
            row.mocks,
            _score(row.last_score),
            "" if row.last_passed is None else ("yes" if row.last_passed else "no"),
            row.last_at.isoformat() if row.last_at else "",
            _score(row.best_score),
        ]
        for cell in row.cells:
            line += ["" if cell.percent is None else round(cell.percent), cell.counted, cell.flag]
        writer.writerow(line)
    return response


def _score(value) -> str:
    # Two decimals as stored, whichever database the subquery came back from.
    return "" if value is None else f"{Decimal(value):.2f}"


@instructor_required
@require_POST
def renew_invitation(request: HttpRequest, cohort_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    asks = request.POST.get("shares_results") == "on"
    services.invitation_renew(cohort=cohort, shares_results=asks)
    messages.success(
        request,
        "A new invitation link was made; the old one no longer works. It lasts 14 days"
        + (" and asks each learner to share their mock results." if asks else "."),
    )
    return redirect("cohorts:detail", cohort_id=cohort.pk)


@instructor_required
@require_POST
def revoke_invitation(request: HttpRequest, cohort_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    services.invitation_revoke(cohort=cohort)
    messages.success(request, "The invitation link no longer works. Members stay; make a new link to invite more.")
    return redirect("cohorts:detail", cohort_id=cohort.pk)


@instructor_required
def remove_member(request: HttpRequest, cohort_id: int, membership_id: int) -> HttpResponse:
    cohort = owned_cohort(request.user, cohort_id)
    membership = get_object_or_404(Membership.objects.select_related("learner"), pk=membership_id, cohort=cohort)
    if request.method == "POST":
        services.membership_end(membership=membership)
        messages.success(request, f"{membership.learner.get_username()} is no longer in “{cohort.name}”.")
        return redirect("cohorts:detail", cohort_id=cohort.pk)
    return render(request, "cohorts/confirm.html", {
        "title": f"Remove {membership.learner.get_username()} from {cohort.name}?",
        "explanation": "They stop appearing on this cohort's page and in its export. Their own attempts and "
                       "dashboard are not touched; they can join again with a valid invitation link.",
        "action": "Remove from cohort",
        "cancel_url": reverse("cohorts:detail", args=[cohort.pk]),
    })


@login_required
def join(request: HttpRequest, token: str) -> HttpResponse:
    invitation = Invitation.objects.select_related("cohort__exam", "cohort__owner").filter(token=token).first()
    if invitation is None:
        return render(request, "cohorts/join.html", {
            "refusal": "This invitation link is not valid. Check that you copied all of it, or ask the instructor for a new one.",
        }, status=404)
    cohort = invitation.cohort
    membership = Membership.objects.filter(cohort=cohort, learner=request.user).first()
    if membership:
        messages.info(request, f"You are already a member of “{cohort.name}”.")
        return redirect("cohorts:index")
    refusal = services.join_refusal(invitation=invitation, learner=request.user)
    if request.method == "POST" and not refusal:
        try:
            services.cohort_join(
                invitation=invitation, learner=request.user, share_results=request.POST.get("share_results") == "on"
            )
        except services.JoinRefused as refused:
            refusal = str(refused)
        else:
            messages.success(request, f"You joined “{cohort.name}”. You can leave it at any time from My cohorts.")
            return redirect("cohorts:index")
    return render(
        request, "cohorts/join.html", {"cohort": cohort, "invitation": invitation, "refusal": refusal},
        status=410 if refusal else 200,
    )


@login_required
def leave(request: HttpRequest, cohort_id: int) -> HttpResponse:
    if not -(2**63) <= cohort_id < 2**63:
        raise Http404("No such cohort.")  # past any id (SQLite would fail on it: the fuzzer)
    membership = get_object_or_404(Membership.objects.select_related("cohort"), cohort_id=cohort_id, learner=request.user)
    if request.method == "POST":
        services.membership_end(membership=membership)
        messages.success(request, f"You left “{membership.cohort.name}”. Its instructor no longer sees your results.")
        return redirect("cohorts:index")
    return render(request, "cohorts/confirm.html", {
        "title": f"Leave {membership.cohort.name}?",
        "explanation": "Its instructor will no longer see your mock scores, your mock results or your domain "
                       "mastery. Your own attempts and dashboard are not touched.",
        "action": "Leave cohort",
        "cancel_url": reverse("cohorts:index"),
    })


@login_required
@require_POST
def results_sharing(request: HttpRequest, cohort_id: int) -> HttpResponse:
    """A member shares their mock results with the cohort's instructor, or stops (My cohorts)."""
    if not -(2**63) <= cohort_id < 2**63:
        raise Http404("No such cohort.")
    membership = get_object_or_404(Membership.objects.select_related("cohort__owner"), cohort_id=cohort_id, learner=request.user)
    share = request.POST.get("share") == "yes"
    services.results_sharing_set(membership=membership, share=share)
    owner = membership.cohort.owner.get_username()
    if share:
        messages.success(request, f"{owner} now sees your mock results in “{membership.cohort.name}”. You can stop at any time here.")
    else:
        messages.success(request, f"{owner} no longer sees your mock results in “{membership.cohort.name}”.")
    return redirect("cohorts:index")


@instructor_required
def member_results(request: HttpRequest, cohort_id: int, membership_id: int) -> HttpResponse:
    """A member's mock results, only while they are a member and share them: 404 otherwise."""
    cohort = owned_cohort(request.user, cohort_id)
    membership = get_object_or_404(
        sharing_memberships(viewer=request.user).select_related("learner"), pk=membership_id, cohort=cohort
    )
    context = results.member_mocks(cohort=cohort, membership=membership, chosen=request.GET.get("attempt"), viewer=request.user)
    return render(request, "cohorts/member_results.html", {"cohort": cohort, "membership": membership, **context})
