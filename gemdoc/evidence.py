"""Does the bundle hold evidence for a question at all? Decided before ranking, as two ratios
inside the query, never as a threshold on a score (scores change scale with the ranker).

- coverage: the share of the question's distinctive terms (not stopwords, not used by the
  store everywhere) that occur in the bundle at all;
- concentration: the share of the question's rarity (idf over its distinctive terms, a
  missing term counting as the rarest) that lands in one chunk.

A question below either bar gets no results and a diagnosis saying why and what to do.
An API named exactly (``Rack::Utils.parse_nested_query``) is evidence by itself. The bars
were fitted on the benchmark ruler (benchmarks/refusal_bars.py).
"""

from dataclasses import asdict, dataclass, field

MIN_COVERAGE = 0.85
MIN_CONCENTRATION = 0.6

HINTS = {
    "no_query_term_in_index": "No word of the question occurs in this bundle's documentation: ask with the words "
    "or API names the gem's docs would use, or check that the gem is in Gemfile.lock (`gemdoc status`).",
    "only_ubiquitous_terms_matched": "Only words the documentation uses everywhere matched: add a distinctive "
    "term, such as a class, method or option name.",
    "too_little_of_the_query_matched": "Most of the question's distinctive words are absent from this bundle: "
    "it probably does not document this; rephrase in the gem's own terms before concluding so.",
    "matched_terms_are_scattered": "The words occur, but never together in one passage: the subject is "
    "probably not documented in this bundle. Say so rather than answering from memory.",
}


@dataclass
class Evidence:
    distinctive: list[str] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    ubiquitous: list[str] = field(default_factory=list)
    coverage: float = 0.0
    concentration: float = 0.0
    exact: bool = False  # an API named exactly in the question exists in the bundle
    reason: str | None = None

    @property
    def refused(self) -> bool:
        return self.reason is not None

    def diagnosis(self) -> dict:
        """The machine-readable account of a refusal (also useful when answering)."""
        data = asdict(self)
        data["coverage"] = round(self.coverage, 4)
        data["concentration"] = round(self.concentration, 4)
        data |= {"min_coverage": MIN_COVERAGE, "min_concentration": MIN_CONCENTRATION}
        data["hint"] = HINTS.get(self.reason) if self.reason else None
        return data


def assess(
    terms: list[str],
    ubiquitous: list[str],
    rarity: dict[str, float],
    in_bundle: set[str],
    best_share: float,
    exact: bool,
) -> Evidence:
    """``rarity`` weighs every term (a term absent from the store as the rarest); ``in_bundle``
    holds the terms with a chunk in the bundle; ``best_share`` is the largest rarity any one
    chunk holds, as a share of the distinctive terms' total."""
    distinctive = [t for t in terms if t not in ubiquitous]
    matched = [t for t in distinctive if t in in_bundle]
    found = Evidence(distinctive, matched, [t for t in terms if t in ubiquitous], exact=exact)
    found.coverage = len(matched) / len(distinctive) if distinctive else 0.0
    found.concentration = best_share if distinctive else 0.0
    if exact:
        return found
    if not any(t in in_bundle for t in terms):
        found.reason = "no_query_term_in_index"
    elif not matched:
        found.reason = "only_ubiquitous_terms_matched"
    elif found.coverage < MIN_COVERAGE:
        found.reason = "too_little_of_the_query_matched"
    elif found.concentration < MIN_CONCENTRATION:
        found.reason = "matched_terms_are_scattered"
    return found
