"""The cohort page's figures: each member's last and best mock and domain mastery, the cohort's averages, the flags."""
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db.models import Count, Max, OuterRef, Subquery

from cohorts.models import Cohort, Membership
from exams.models import Attempt, AttemptMode, Domain
from exams.study import progress

# Fewer counted responses than this in a domain is "not enough data", and never flagged.
MIN_COUNTED = 10
MEMBERS_PER_PAGE = 50


class Flag:
    AT_RISK = "At risk"
    NEEDS_REVIEW = "Needs review"
    NOT_ENOUGH_DATA = "Not enough data"


@dataclass(frozen=True)
class DomainCell:
    domain: Domain
    right: int
    counted: int
    percent: float | None  # mastery, None without enough data
    flag: str  # one of Flag, or "" when the member is doing fine


@dataclass(frozen=True)
class MemberRow:
    membership: Membership
    last_score: Decimal | None
    last_passed: bool | None
    last_at: object
    best_score: Decimal | None
    mocks: int
    cells: list[DomainCell]


@dataclass(frozen=True)
class DomainAverage:
    domain: Domain
    percent: float | None  # mean of the members' mastery, over members with enough data
    members: int  # how many members that mean is over


def flag_for(*, cohort: Cohort, right: int, counted: int) -> tuple[float | None, str]:
    """A member-domain's mastery (percent, the dashboard's rule) and its flag under the cohort's thresholds."""
    if counted < MIN_COUNTED:
        return None, Flag.NOT_ENOUGH_DATA
    percent = progress.readiness.mastery(right=right, answered=counted)
    if percent < cohort.at_risk_below:
        flag = Flag.AT_RISK
    elif percent < cohort.needs_review_below:
        flag = Flag.NEEDS_REVIEW
    else:
        flag = ""
    return percent, flag


def members_with_mocks(cohort: Cohort):
    """The cohort's memberships, each with its learner's last and best finished mock of the exam."""
    mocks = Attempt.objects.finished().filter(user=OuterRef("learner"), exam=cohort.exam_id, mode=AttemptMode.MOCK)
    last = mocks.order_by("-finished_at", "-pk")
    summary = mocks.order_by().values("user")
    return (
        cohort.memberships.select_related("learner")
        .annotate(
            last_score=Subquery(last.values("score")[:1]),
            last_passed=Subquery(last.values("passed")[:1]),
            last_at=Subquery(last.values("finished_at")[:1]),
            best_score=Subquery(summary.annotate(best=Max("score")).values("best")),
            mocks=Subquery(summary.annotate(count=Count("pk")).values("count")),
        )
        .order_by("learner__username", "pk")
    )


def _cells(*, cohort: Cohort, domains: list[Domain], standings: dict) -> list[DomainCell]:
    cells = []
    for domain in domains:
        standing = standings.get(domain.pk)
        right, counted = (standing.right, standing.answered) if standing else (0, 0)
        percent, flag = flag_for(cohort=cohort, right=right, counted=counted)
        cells.append(DomainCell(domain=domain, right=right, counted=counted, percent=percent, flag=flag))
    return cells


def _row(*, cohort: Cohort, membership: Membership, domains: list[Domain], standings: dict) -> MemberRow:
    return MemberRow(
        membership=membership,
        last_score=membership.last_score,
        last_passed=membership.last_passed,
        last_at=membership.last_at,
        best_score=membership.best_score,
        mocks=membership.mocks or 0,
        cells=_cells(cohort=cohort, domains=domains, standings=standings.get(membership.learner_id, {})),
    )


def _learners(cohort: Cohort):
    return get_user_model().objects.filter(cohort_memberships__cohort=cohort)


def cohort_report(*, cohort: Cohort, page: str | int | None = 1) -> dict:
    """One page of member rows and the cohort's averages per domain, in a fixed number of queries."""
    domains = list(cohort.exam.domains.all())
    standings = progress.standings_of_learners(learners=_learners(cohort), exam=cohort.exam)
    members = Paginator(members_with_mocks(cohort), MEMBERS_PER_PAGE).get_page(page)
    rows = [_row(cohort=cohort, membership=m, domains=domains, standings=standings) for m in members]
    averages = []
    for domain in domains:
        percents = [
            percent
            for by_domain in standings.values()
            for percent, _ in [flag_for(cohort=cohort, right=by_domain[domain.pk].right, counted=by_domain[domain.pk].answered)]
            if percent is not None
        ]
        averages.append(
            DomainAverage(domain=domain, percent=sum(percents) / len(percents) if percents else None, members=len(percents))
        )
    return {"domains": domains, "page": members, "rows": rows, "averages": averages}


def all_rows(*, cohort: Cohort) -> tuple[list[Domain], list[MemberRow]]:
    """Every member's row, for the CSV export (three queries)."""
    domains = list(cohort.exam.domains.all())
    standings = progress.standings_of_learners(learners=_learners(cohort), exam=cohort.exam)
    return domains, [
        _row(cohort=cohort, membership=m, domains=domains, standings=standings) for m in members_with_mocks(cohort)
    ]
