"""The cohort page's figures: each member's last and best mock and domain mastery, the cohort's averages, the flags."""
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db.models import Count, Max, OuterRef, Subquery

from cohorts.models import Cohort, Membership
from exams.models import Attempt, AttemptMode, Domain
from exams.study import ability, progress

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
    # The per-domain level (exams.study.ability): the expected share right on the domain's
    # questions at their average difficulty. The flag reads it, so a member who practises their
    # mistakes (harder questions, a lower share right) is not flagged for it.
    level: float | None = None


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


def flag_for(*, cohort: Cohort, right: int, counted: int, level: float | None = None) -> tuple[float | None, str]:
    """A member-domain's mastery (percent, the dashboard's rule) and its flag under the cohort's
    thresholds, read on the member's level in the domain when there is one, else on mastery."""
    if counted < MIN_COUNTED:
        return None, Flag.NOT_ENOUGH_DATA
    percent = progress.readiness.mastery(right=right, answered=counted)
    measure = percent if level is None else level
    if measure < cohort.at_risk_below:
        flag = Flag.AT_RISK
    elif measure < cohort.needs_review_below:
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


def _cells(*, cohort: Cohort, domains: list[Domain], standings: dict, levels: dict) -> list[DomainCell]:
    cells = []
    for domain in domains:
        standing = standings.get(domain.pk)
        right, counted = (standing.right, standing.answered) if standing else (0, 0)
        level = levels.get(domain.pk) if counted >= MIN_COUNTED else None
        percent, flag = flag_for(cohort=cohort, right=right, counted=counted, level=level)
        cells.append(DomainCell(domain=domain, right=right, counted=counted, percent=percent, flag=flag, level=level))
    return cells


def _row(*, cohort: Cohort, membership: Membership, domains: list[Domain], standings: dict, levels: dict) -> MemberRow:
    return MemberRow(
        membership=membership,
        last_score=membership.last_score,
        last_passed=membership.last_passed,
        last_at=membership.last_at,
        best_score=membership.best_score,
        mocks=membership.mocks or 0,
        cells=_cells(cohort=cohort, domains=domains, standings=standings.get(membership.learner_id, {}),
                     levels=levels.get(membership.learner_id, {})),
    )


def _learners(cohort: Cohort):
    return get_user_model().objects.filter(cohort_memberships__cohort=cohort)


DEFAULT_SORT = "learner"


def _sort_keys(domains: list[Domain]) -> dict:
    """Each column's ?sort= value and how it orders rows; empty figures sort last either way."""
    keys = {
        "learner": lambda row: (False, row.membership.learner.get_username().casefold()),
        "mocks": lambda row: (False, row.mocks),
        "last": lambda row: (row.last_score is None, row.last_score or 0),
        "best": lambda row: (row.best_score is None, row.best_score or 0),
    }
    for index, domain in enumerate(domains):
        keys[f"d{domain.pk}"] = lambda row, index=index: (row.cells[index].percent is None, row.cells[index].percent or 0)
    return keys


def sort_rows(rows: list[MemberRow], *, domains: list[Domain], sort: str | None) -> tuple[list[MemberRow], str]:
    """The rows in the order ?sort= asks ("mocks", "-last", "d12" for a domain…); an unknown value gives the default.

    Descending keeps members without a figure last, as ascending does.
    """
    keys = _sort_keys(domains)
    sort = sort if isinstance(sort, str) else ""
    descending = sort.startswith("-")
    column = sort[1:] if descending else sort
    if column not in keys:
        column, descending = DEFAULT_SORT, False
    key = keys[column]
    # Stable: ties stay in username order.
    rows = sorted(rows, key=keys[DEFAULT_SORT])
    present = [row for row in rows if not key(row)[0]]
    missing = [row for row in rows if key(row)[0]]
    present.sort(key=lambda row: key(row)[1], reverse=descending)
    return present + missing, ("-" if descending else "") + column


def cohort_report(*, cohort: Cohort, page: str | int | None = 1, sort: str | None = None) -> dict:
    """One page of member rows, sorted by any column, and the cohort's averages per domain, in a
    fixed number of queries (every member's row is made, so any column sorts the whole cohort)."""
    domains = list(cohort.exam.domains.all())
    standings = progress.standings_of_learners(learners=_learners(cohort), exam=cohort.exam)
    levels = ability.domain_levels_of_learners(learners=_learners(cohort), exam=cohort.exam, domains=domains)
    every = [
        _row(cohort=cohort, membership=m, domains=domains, standings=standings, levels=levels)
        for m in members_with_mocks(cohort)
    ]
    ordered, sort = sort_rows(every, domains=domains, sort=sort)
    members = Paginator(ordered, MEMBERS_PER_PAGE).get_page(page)
    rows = list(members)
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
    return {
        "domains": domains, "page": members, "rows": rows, "averages": averages, "sort": sort,
        "columns": _columns(domains=domains, sort=sort),
    }


def _columns(*, domains: list[Domain], sort: str) -> list[dict]:
    """The sortable headers: each with its ?sort= link (the other direction when it is the
    current column) and its aria-sort."""
    columns = [("learner", "Learner"), ("mocks", "Mocks"), ("last", "Last mock"), ("best", "Best mock")]
    columns += [(f"d{domain.pk}", domain.name) for domain in domains]
    descending = sort.startswith("-")
    current = sort.lstrip("-")
    made = []
    for key, label in columns:
        is_current = key == current
        made.append({
            "key": key,
            "label": label,
            "is_domain": key[0] == "d" and key[1:].isdigit(),
            "href": f"?sort={'' if is_current and descending else '-' if is_current else ''}{key}",
            "aria_sort": ("descending" if descending else "ascending") if is_current else None,
        })
    return made


def all_rows(*, cohort: Cohort) -> tuple[list[Domain], list[MemberRow]]:
    """Every member's row, for the CSV export (a fixed number of queries)."""
    domains = list(cohort.exam.domains.all())
    standings = progress.standings_of_learners(learners=_learners(cohort), exam=cohort.exam)
    levels = ability.domain_levels_of_learners(learners=_learners(cohort), exam=cohort.exam, domains=domains)
    return domains, [
        _row(cohort=cohort, membership=m, domains=domains, standings=standings, levels=levels)
        for m in members_with_mocks(cohort)
    ]
