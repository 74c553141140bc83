"""An answered question as results and a checked practice question show it: key, feedback, erratum notice."""


from exams.letters import choice_label
from exams.markdown import render_inline_markdown
from exams.models import Erratum, ErratumStatus, Response


def result_item(response: Response, erratum: Erratum | None, *, held: bool = False) -> dict:
    """One answered question as results and checked practice show it: key, feedback, notice.

    `held`: the question is also in the learner's running mock, so only the learner's own
    answer is shown (the key rule, `exams.room.access.running_mock_question_ids`).
    """
    if held:
        picked = {pick.choice_id for pick in response.picks.all()}
        options = [
            {"letter": choice_label(index), "text": render_inline_markdown(response.version.choice_text(choice_id)),
             "picked": choice_id in picked, "struck": False, "is_key": False, "feedback": ""}
            for index, choice_id in enumerate(response.choice_order)
        ]
        return {"response": response, "options": options, "held": True,
                "answer_letters": [option["letter"] for option in options if option["picked"]], "key_letters": [], "notice": None}
    choices = {choice.pk: choice for choice in response.question.choices.all()}
    picked = {pick.choice_id for pick in response.picks.all()}
    struck = {strike.choice_id for strike in response.strikes.all()}
    letter = {choice_id: choice_label(index) for index, choice_id in enumerate(response.choice_order)}
    options = [
        {
            "letter": letter[choice_id],
            "text": render_inline_markdown(response.version.choice_text(choice_id)),
            "feedback": render_inline_markdown(response.version.choice_feedback(choice_id)),
            "struck": choice_id in struck,
            "is_key": choices[choice_id].is_correct if choice_id in choices else False,
            "picked": choice_id in picked,
        }
        for choice_id in response.choice_order
    ]
    corrected = corrected_text(response, erratum)
    if corrected is not None:
        # The corrected feedback in place, the attempt's own one step away ("as shown in your attempt").
        for option, choice_id in zip(options, response.choice_order, strict=True):
            option["shown_feedback"] = option["feedback"]
            option["feedback"] = render_inline_markdown(corrected.choice_feedback(choice_id))
            option["feedback_corrected"] = option["feedback"] != option["shown_feedback"]
    notice = None
    if erratum is not None:
        published = [choice.pk for choice in erratum.published_key.all()]
        notice = {
            "erratum": erratum,
            "published": [
                {"letter": letter.get(pk, "?"), "text": render_inline_markdown(response.version.choice_text(pk))} for pk in published
            ],
            "corrected": [option for option in options if option["is_key"]],
            "text": corrected,
        }
    return {
        "response": response,
        "options": options,
        "answer_letters": [option["letter"] for option in options if option["picked"]],
        "key_letters": [option["letter"] for option in options if option["is_key"]],
        "notice": notice,
    }


def corrected_text(response: Response, erratum: Erratum | None):
    """The question's text as the latest confirmed erratum corrected it, when it differs from the attempt's."""
    corrected = erratum.corrected_version if erratum is not None else None
    if corrected is None or corrected.pk == response.version_id:
        return None
    shown = response.version
    if corrected.content["explanation"] == shown.content["explanation"] and all(
        corrected.choice_feedback(pk) == shown.choice_feedback(pk) for pk in response.choice_order
    ):
        return None
    return corrected


def confirmed_erratum_of(question_id: int) -> Erratum | None:
    return (
        Erratum.objects.filter(question_id=question_id, status=ErratumStatus.CONFIRMED)
        .select_related("corrected_version")
        .prefetch_related("published_key")
        .order_by("-decided_at", "-pk")
        .first()
    )
