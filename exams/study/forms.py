"""The practice builder's form: domains, topics, source, size and timing of a session."""
from django import forms


class PracticeBuilderForm(forms.Form):
    """The practice builder: domains and topics, how many, from where, timed or not, feedback when."""

    domains = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple)
    topics = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    count = forms.IntegerField(min_value=1, max_value=100, initial=20, label="Questions")
    source = forms.ChoiceField(initial="all", widget=forms.RadioSelect, label="From")
    mocks = forms.IntegerField(min_value=1, max_value=10, initial=2, label="Mocks to look back over")
    timing = forms.ChoiceField(
        choices=[("untimed", "Untimed"), ("timed", "Timed")], initial="untimed", widget=forms.RadioSelect
    )
    minutes = forms.IntegerField(min_value=5, max_value=180, initial=30, required=False)
    feedback = forms.ChoiceField(
        choices=[("each", "After each answer (“Check answer”)"), ("end", "At the end")], initial="each",
        widget=forms.RadioSelect,
    )

    def __init__(self, *args, domains, topics: list[tuple[int, str]], **kwargs):
        from exams.study.practice import PracticeSource

        super().__init__(*args, **kwargs)
        self.domain_list = list(domains)
        self.topic_list = topics
        self.fields["domains"].choices = [(d.pk, d.name) for d in self.domain_list]
        self.fields["domains"].error_messages["invalid_choice"] = "That domain is not one of this exam's."
        self.fields["topics"].choices = [(self.topic_value(domain_id, topic), topic) for domain_id, topic in topics]
        self.fields["topics"].error_messages["invalid_choice"] = "That topic is not one of this exam's."
        self.fields["source"].choices = PracticeSource.choices

    @staticmethod
    def topic_value(domain_id: int, topic: str) -> str:
        return f"{domain_id}:{topic}"

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("timing") == "timed" and not self.errors.get("minutes") and cleaned.get("minutes") is None:
            self.add_error("minutes", "Say how many minutes a timed session lasts (5–180).")
        picked = set(cleaned.get("domains") or [])
        names = {d.pk: d.name for d in self.domain_list}
        for value in cleaned.get("topics") or []:
            domain_id, topic = value.split(":", 1)
            if picked and int(domain_id) not in picked:
                self.add_error(
                    "topics", f"“{topic}” is a topic of {names[int(domain_id)]}, which is not ticked: tick it too, or untick the topic."
                )
        return cleaned

    def plan(self):
        """The validated choices as a PracticePlan (call after is_valid())."""
        from exams.study.practice import PracticePlan

        data = self.cleaned_data
        picked = set(data["domains"])
        domains = tuple(d for d in self.domain_list if not picked or d.pk in picked)
        topics: dict[int, set[str]] = {}
        for value in data["topics"]:
            domain_id, topic = value.split(":", 1)
            topics.setdefault(int(domain_id), set()).add(topic)
        return PracticePlan(
            domains=domains,
            topics={domain_id: frozenset(names) for domain_id, names in topics.items()},
            count=data["count"],
            source=data["source"],
            mocks=data["mocks"],
            minutes=data["minutes"] if data["timing"] == "timed" else None,
            feedback_at_end=data["feedback"] == "end",
        )

    def domain_rows(self) -> list[dict]:
        """Each domain with its topics, and what the learner ticked, for the template."""
        data = self.data if self.is_bound else {}
        ticked_domains = set(data.getlist("domains")) if self.is_bound else set()
        ticked_topics = set(data.getlist("topics")) if self.is_bound else set()
        rows = []
        for domain in self.domain_list:
            topics = [
                {"value": self.topic_value(domain_id, topic), "name": topic, "checked": self.topic_value(domain_id, topic) in ticked_topics}
                for domain_id, topic in self.topic_list
                if domain_id == domain.pk
            ]
            rows.append({
                "domain": domain, "checked": str(domain.pk) in ticked_domains, "topics": topics,
                "any_topic": any(t["checked"] for t in topics),
            })
        return rows

    def error_text(self) -> str:
        return " ".join(message for messages in self.errors.values() for message in messages)
