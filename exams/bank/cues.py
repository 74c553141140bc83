"""Test-taking cues in a question bank: the measures tests/test_bank.py and tools/bank_check.py share.

Plain functions over plain data (no Django), so the checker runs on a fixture file while it is
being written and the tests run the same code on the bank in the database. A question is a
`CueQuestion`; lengths are characters of the stored text and a k-way tie counts 1/k.
"""
import math
import re
from collections import Counter
from dataclasses import dataclass, field

ABSOLUTE_WORDS = ("always", "never", "only", "cannot", "guaranteed", "every", "automatically", "must")
_ABSOLUTE = re.compile(r"\b(?:" + "|".join(ABSOLUTE_WORDS) + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_LONG_WORD = re.compile(r"[a-z]{4,}")


@dataclass(frozen=True)
class CueQuestion:
    id: int
    domain: str
    stem: str
    choices: tuple[str, ...]
    keys: frozenset[int]  # indexes into choices
    exclusion_group: str = ""
    labels: tuple[str, ...] = field(default=())
    topic: str = ""

    @property
    def is_single(self) -> bool:
        return len(self.keys) == 1

    @property
    def key_text(self) -> str:
        return " ".join(self.choices[i] for i in sorted(self.keys))


def has_absolute_word(text: str) -> bool:
    return bool(_ABSOLUTE.search(text))


def extreme_key_share(question: CueQuestion, *, longest: bool) -> float:
    """1 if the key alone is the longest (or shortest) choice, 1/k in a k-way tie, else 0."""
    lengths = [len(text) for text in question.choices]
    target = max(lengths) if longest else min(lengths)
    tied = [i for i, n in enumerate(lengths) if n == target]
    (key,) = question.keys
    return 1 / len(tied) if key in tied else 0.0


def length_cue_by_domain(questions: list[CueQuestion]) -> dict[str, tuple[float, float, int]]:
    """Per domain: (share of single-answer keys that are the longest, share the shortest, n)."""
    sums: dict[str, list[float]] = {}
    for q in questions:
        if not q.is_single:
            continue
        row = sums.setdefault(q.domain, [0.0, 0.0, 0])
        row[0] += extreme_key_share(q, longest=True)
        row[1] += extreme_key_share(q, longest=False)
        row[2] += 1
    return {domain: (lo / n, sh / n, n) for domain, (lo, sh, n) in sums.items()}


def absolute_word_shares(questions: list[CueQuestion]) -> tuple[float, float, list[int]]:
    """(share of keys, share of distractors) containing an absolute word, over single-answer
    questions, and the questions whose distractors carry one while the key does not."""
    keys = key_hits = distractors = distractor_hits = 0
    cued = []
    for q in questions:
        if not q.is_single:
            continue
        key_hit = False
        distractor_hit = False
        for i, text in enumerate(q.choices):
            hit = has_absolute_word(text)
            if i in q.keys:
                keys += 1
                key_hits += hit
                key_hit |= hit
            else:
                distractors += 1
                distractor_hits += hit
                distractor_hit |= hit
        if distractor_hit and not key_hit:
            cued.append(q.id)
    return key_hits / max(keys, 1), distractor_hits / max(distractors, 1), cued


def stem_words(text: str) -> set[str]:
    return set(_LONG_WORD.findall(text.lower()))


def key_echoes_stem(question: CueQuestion) -> bool:
    """True when the key repeats more of the stem's 4+-letter words than any distractor does."""
    words = stem_words(question.stem)
    echoes = [len(words & stem_words(text)) for text in question.choices]
    key = max(echoes[i] for i in question.keys)
    distractor = max((n for i, n in enumerate(echoes) if i not in question.keys), default=0)
    return key > distractor


def stem_echo_share(questions: list[CueQuestion]) -> tuple[float, list[int]]:
    """Share of single-answer questions whose key does not out-echo every distractor, and the ones that do."""
    singles = [q for q in questions if q.is_single]
    echoing = [q.id for q in singles if key_echoes_stem(q)]
    return 1 - len(echoing) / max(len(singles), 1), echoing


_DISTINCT_WORD = re.compile(r"[a-z][a-z0-9]{3,}")


def distinctive_words(text: str, *, excluded: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Words of 4+ characters, lower-cased, a plural "s" stripped, minus `excluded` (given in
    the same form)."""
    words = {w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in _DISTINCT_WORD.findall(text.lower())}
    return words - set(excluded)


def key_shares_distinctive_stem_words(question: CueQuestion, stop_words: frozenset[str] | set[str]) -> bool:
    """True when the key (for multiple-select, the key that shares fewest) shares more of the
    stem's distinctive words than every distractor does. Distinctive: not in `stop_words` and
    not a word of the question's topic, which every choice may fairly name."""
    excluded = set(stop_words) | distinctive_words(question.topic)
    stem = distinctive_words(question.stem, excluded=excluded)
    shared = [len(stem & distinctive_words(text)) for text in question.choices]
    key = min(shared[i] for i in question.keys)
    distractor = max((n for i, n in enumerate(shared) if i not in question.keys), default=0)
    return key > distractor


def distinctive_echo_by_domain(questions: list[CueQuestion], stop_words: frozenset[str] | set[str]) -> dict[str, tuple[float, list[int]]]:
    """Per domain: the share of questions (single and multiple-select) whose key out-shares
    every distractor in distinctive stem words, and those questions."""
    result: dict[str, tuple[float, list[int]]] = {}
    for domain in sorted({q.domain for q in questions}):
        mine = [q for q in questions if q.domain == domain]
        cued = [q.id for q in mine if key_shares_distinctive_stem_words(q, stop_words)]
        result[domain] = (len(cued) / len(mine), cued)
    return result


def _tfidf_vectors(documents: list[str], *, smooth: bool) -> list[dict[str, float]]:
    tokens = [Counter(_WORD.findall(doc.lower())) for doc in documents]
    n = len(documents)
    df = Counter(word for counts in tokens for word in counts)
    # Plain idf (log N/df) and scikit-learn's smoothed idf (ln((1+N)/(1+df)) + 1) disagree on
    # how much shared common words count; the check holds under both.
    if smooth:
        idf = {word: math.log((1 + n) / (1 + d)) + 1 for word, d in df.items()}
    else:
        idf = {word: math.log(n / d) for word, d in df.items()}
    vectors = []
    for counts in tokens:
        vector = {word: tf * idf[word] for word, tf in counts.items() if idf[word] > 0}
        norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
        vectors.append({word: v / norm for word, v in vector.items()})
    return vectors


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    small, large = (a, b) if len(a) < len(b) else (b, a)
    return sum(v * large.get(word, 0.0) for word, v in small.items())


def near_duplicates(questions: list[CueQuestion], *, threshold: float = 0.5) -> list[tuple[float, int, int]]:
    """Pairs whose stem + key TF-IDF cosine (idf over these questions) is at or above the
    threshold under either idf and which do not share an exclusion group, most similar first."""
    documents = [f"{q.stem} {q.key_text}" for q in questions]
    plain, smoothed = _tfidf_vectors(documents, smooth=False), _tfidf_vectors(documents, smooth=True)
    pairs = []
    for i in range(len(documents)):
        for j in range(i + 1, len(documents)):
            cosine = max(_cosine(plain[i], plain[j]), _cosine(smoothed[i], smoothed[j]))
            if cosine < threshold:
                continue
            group_a, group_b = questions[i].exclusion_group, questions[j].exclusion_group
            if group_a and group_a == group_b:
                continue
            pairs.append((round(cosine, 3), questions[i].id, questions[j].id))
    return sorted(pairs, reverse=True)


def key_positions(questions: list[CueQuestion]) -> Counter:
    """How many single-answer keys sit at each authored label."""
    return Counter(q.labels[next(iter(q.keys))] for q in questions if q.is_single and q.labels)
