"""Turn what a user typed into safe FTS5 terms, and recognise Ruby identifiers.

Nothing typed reaches FTS5 syntax: terms are runs of letters and digits (the
same split the unicode61 tokenizer makes), each double-quoted, so quotes, ``*``,
``OR``, ``NEAR(``, ``:``, ``-`` and parentheses are only ever text.
"""

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 2000
MAX_TERMS = 32
TERM = re.compile(r"[^\W_]+", re.UNICODE)
# Ruby's operator methods as RDoc names them: ``REXML::Element#[]``, ``Comparable#<=>``, ``Set::[]``. After a
# ``.``, with no owner or after a one-letter owner's ``#`` only the longer ones, so that ``Ruby.*``, ``OK.!``, a
# shebang ``#!`` or an exclaimed language (``C#!``) stay prose
LONG_OPERATOR = r"(?:\[\]=?|<=>|===?|=~|!=|!~|<<|>>|<=|>=|\*\*|[-+]@)"
OPERATOR = rf"(?:{LONG_OPERATOR}|[-+*/%<>!~^&|])"
METHOD = rf"(?:[a-z_]\w*[?!=]?|{OPERATOR})"
OWNER = r"[A-Z]\w*(?:::[A-Z]\w*)*"
OPERATOR_NAME = (rf"(?:(?<=\w\w)#|(?<=::\w)#|::){OPERATOR}$|\w#{LONG_OPERATOR}$|[A-Z]\w*\.{LONG_OPERATOR}$"
                 rf"|^#{LONG_OPERATOR}$")
IDENTIFIER = re.compile(
    rf"^(?:{OWNER})?(?:(?:#|::|\.)?[a-z_]\w*[?!=]?)?$|^[A-Z]\w*(?:::[A-Z]\w*)+$"
    rf"|^(?:{OWNER}(?:#|::){LONG_OPERATOR}|{OWNER}::{OPERATOR}|(?:[A-Z]\w+|[A-Z]\w*(?:::[A-Z]\w*)+)#{OPERATOR}"
    rf"|{OWNER}\.{LONG_OPERATOR}|#{LONG_OPERATOR})$"
)
ENDS_IN_OPERATOR = re.compile(OPERATOR_NAME)  # an operator's brackets and dots are no punctuation


def token(word: str, punctuation: str) -> str:
    """``word`` without ``punctuation`` around it, but for the brackets or dots of an operator method
    that ends it (``REXML::Element#[]``, ``Element#[]=.``)."""
    if not any(mark in word for mark in "#:."):  # no operator name: most words, on every search's path
        return word.strip(punctuation)
    word = word.lstrip(punctuation)
    end = len(word)
    while end and not ENDS_IN_OPERATOR.search(word[:end]):
        if word[end - 1] not in punctuation:
            return word[:end]
        end -= 1
    return word[:end]


@dataclass(frozen=True)
class Identifier:
    """A query that names an API: ``Hash#dig``, ``Rack::Utils.parse_nested_query``, ``#fetch``."""

    full_names: tuple[str, ...]  # ri spellings to match exactly
    name: str  # the last segment, lower-cased


def terms(text: str) -> list[str]:
    """Distinct lower-cased terms, in order of first appearance."""
    seen: dict[str, None] = {}
    for token in TERM.findall(text[:MAX_QUERY_CHARS].lower()):
        seen.setdefault(token, None)
        if len(seen) == MAX_TERMS:
            break
    return list(seen)


SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")  # not inside `json.array! jbuilder`


def sentences_of(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text[:MAX_QUERY_CHARS]) if s.strip()]


def scene_terms(text: str, among: list[str]) -> set[str]:
    """The terms of ``among`` said only in the sentences that set the scene ("Our nightly build runs
    in a container."), not in the one that asks: the last ending in ``?``, else the last. A question
    of one sentence has no scene."""
    sentences = sentences_of(text)
    if len(sentences) < 2:
        return set()
    in_ask = set(terms(asking(sentences)))
    return {t for t in among if t not in in_ask}


def asking(sentences: list[str]) -> str:
    """The sentence that asks: the last ending in ``?``, else the last ("" for none)."""
    asked = questions_of(sentences)
    return asked[-1] if asked else ""


def questions_of(sentences: list[str]) -> list[str]:
    """Every sentence ending in ``?``, else the last."""
    return [s for s in sentences if s.rstrip().endswith("?")] or sentences[-1:]


QUOTED = re.compile(r"(?<!\w)['‘][^'‘’\n]{1,200}['’](?!\w)|[\"“][^\"“”\n]{1,200}[\"”]")  # not an apostrophe
MESSAGE_WORDS = 3  # a quoted name ("kafka") is still a name; a quoted message or example has words


def aside_terms(text: str, among: list[str]) -> set[str]:
    """The terms of ``among`` that the sentence that asks does not say outside quotes: said only where
    the question sets the scene (scene_terms), or there only in a quoted message or example of a few
    words ("readable like 'Argentina - Buenos Aires'"), not as the subject. Unlike scene_terms, also in
    a question of one sentence; a sentence quoted whole is said."""
    said = set(terms(outright(asking(sentences_of(text)))))
    return {t for t in among if t not in said}


def outright(sentence: str) -> str:
    """``sentence`` less the quoted messages and examples in it; the whole sentence when nothing else
    is left of it."""
    rest = sentence
    for span in QUOTED.findall(sentence):
        rest = rest.replace(span, " ") if len(span.split()) >= MESSAGE_WORDS else rest
    return rest if terms(rest) else sentence


CODE = re.compile(rf"[a-z0-9]_[a-z0-9]|[a-z][A-Z]|::|#[a-z_]|\w{{2}}\.[a-z_]{{2}}|{OPERATOR_NAME}")


OWNER_AND_METHOD = re.compile(r"^[A-Z]\w*(?:::[A-Z]\w*)* [a-z_]\w*[?!=]?$")
# A method by its full name (``RSpec::Matchers#change``, ``Rack::Utils.escape``) or a RuboCop cop
# (``Style/StringLiterals``): one API entry, where a class or module (``Faraday::Middleware``) is an area.
SPECIFIC_API = re.compile(rf"^{OWNER}(?:#|::|\.){METHOD}$|^[A-Z]\w+/[A-Z]\w+$")


@dataclass(frozen=True)
class Named:
    """The APIs a question of several words names."""

    words: list[tuple[str, Identifier]]  # a word that reads as code: ``has_many``, ``Sidekiq::Job``
    pairs: list[tuple[str, Identifier]]  # a class and a method name after it: ``FileList resolve``


def named_in(text: str) -> Named:
    """Words that read as identifiers and look like code (``has_many dependent option``), and
    a class followed by a method name (``what does FileList resolve do``, ``Mock expect``)."""
    tokens = [token(w, ",;:()[]'\"?`") for w in text[:MAX_QUERY_CHARS].split()]
    if len(tokens) < 2:
        return Named([], [])
    words = list(dict.fromkeys(tokens))  # an API named twice counts once
    singles = [(w, identifier(w)) for w in words if CODE.search(w)]
    adjacent = dict.fromkeys(zip(tokens, tokens[1:]))
    pairs = [(a, identifier(f"{a}#{b}")) for a, b in adjacent if OWNER_AND_METHOD.match(f"{a} {b}")]
    return Named([(w, i) for w, i in singles if i], [(a, i) for a, i in pairs if i])


def named_asked(text: str) -> Named:
    """The APIs the sentences that ask (questions_of) name outright (named_in of each, less its quoted
    messages): one named only where the question sets the scene, or only inside a quoted message
    ("Jobs fail with ActiveJob::DeserializationError. How do I drop them?", "How do I raise the limit
    behind 'Net::ReadTimeout with #<TCPSocket>'?") is the symptom, not the API asked for."""
    found = [named_in(outright(s)) for s in questions_of(sentences_of(text))]
    words = dict.fromkeys(pair for named in found for pair in named.words)
    pairs = dict.fromkeys(pair for named in found for pair in named.pairs)
    return Named(list(words), list(pairs))


# ``5.15.0``, ``7.1.rc2``, ``5.x``, ``sidekiq (7.2.4)``; not code (``10.minutes``, ``eq(0.9)``)
VERSION = re.compile(r"(?<![\w.])(?<!\w\()\d+\.(?:\d\w*|x)(?:\.\w+)*(?!\w|\.\w)")


def versions(text: str) -> list[str]:
    """Version numbers in a query (``5.15.0``, ``7.1.rc2``), as FTS5 phrases of their parts."""
    found = VERSION.findall(outright(text[:MAX_QUERY_CHARS]))
    return list(dict.fromkeys(" ".join(TERM.findall(v.lower())) for v in found))


def owned_versions(text: str) -> list[tuple[str, str]]:
    """Each version number of a query (as ``versions``' phrase) with the word just before it, lower-cased
    and without ``-`` or ``_`` (``rails`` of "Rails 6.1", ``testunit`` of "test-unit 3.5.3")."""
    text = outright(text[:MAX_QUERY_CHARS])  # "'expected: 0.9 got: 0.8999'" holds values, not releases
    found = []
    for match in VERSION.finditer(text):
        before = re.search(r"([\w-]+)\s+$", text[: match.start()])
        word = re.sub(r"[-_]", "", before[1].lower()) if before else ""
        found.append((" ".join(TERM.findall(match[0].lower())), word))
    return list(dict.fromkeys(found))


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_of(items: list[str], column: str | None = None) -> str:
    body = " OR ".join(quote(t) for t in items)
    return f"{column}:({body})" if column else f"({body})"


def identifier(text: str) -> Identifier | None:
    text = text.strip()
    if not text or " " in text or len(text) > 200 or not IDENTIFIER.match(text):
        return None
    if not re.search(r"[#:.A-Z_]", text):  # a plain lower-case word is a keyword, not an API name
        return None
    spellings = {text, text.lstrip("#")}
    match = re.match(rf"^(.*[A-Za-z0-9_])\.({METHOD})$", text)
    if match:  # Foo.bar is how people write RDoc's Foo::bar
        spellings.add(f"{match[1]}::{match[2]}")
    last = re.split(r"#|::|\.", text)[-1]
    return Identifier(tuple(sorted(spellings)), last.lower())


NAMES_ARE_WORDS = True  # measured on the agent forms by benchmarks/evidence_bars.py
# ``GraphQL``, ``gRPC,``, ``“OAuth2”``, ``gRPC's``: one word, no ``::#._``
ALONE = re.compile(r"[\"'(\[‘“]*([A-Za-z][A-Za-z0-9]*)(?:['’]s)?[\"')\],;:?!.’”…]*")


def code_terms(text: str, prose: bool = True) -> set[str]:
    """The terms of the words written as code (``Sequel::UniqueConstraintViolation``, ``after_commit``).
    In prose (``prose``), a CamelCase word standing alone (``GraphQL``, ``gRPC``, ``WebSocket``) is a
    product's name said in words, as "Kafka" is; in a ``lex:`` part it is a guess at a class."""
    words = text[:MAX_QUERY_CHARS].split()
    return {t.lower() for w in words if CODE.search(w) and not (prose and NAMES_ARE_WORDS and ALONE.fullmatch(w))
            for t in TERM.findall(w)}  # fmt: skip


def product_terms(text: str) -> set[str]:
    """The terms of the words standing alone (ALONE) that are written the way a technology is named:
    with a digit or a capital past the first letter (``gRPC``, ``OAuth2``, ``EC2``, ``iOS``, ``TOTP``),
    but not a CamelCase compound (``ActiveAccounting``, ``PaperTrail``), which as often names the
    user's own class. A lower-case word (a typo, ``retyr``; jargon, ``upsert``) is no such name."""
    words = (m[1] for m in map(ALONE.fullmatch, text[:MAX_QUERY_CHARS].split()) if m)
    return {w.lower() for w in words if _product_like(w) and not COMPOUND.fullmatch(w)}


CLAUSE_BREAK = re.compile(r"[:;]\s|[()\[\]\n]|\s[-–—]\s")  # "Quick one: Idempotent jobs…", "(Sorry.) Herb…"


def proper_names(text: str) -> set[str]:
    """The terms of the words standing alone (ALONE) that a sentence that asks (questions_of)
    capitalises inside a clause, as English writes a name and not a word ("register the Herb engine",
    "switch the driver to Cuprite"): not a clause's first word (after a colon, a bracket, a line
    break, a list's dash), nor one opening a quote or a bracket, nor an abbreviation (``QA``), nor
    any word of a clause in Title Case, which capitalises words as such."""
    found = set()
    for sentence in questions_of(sentences_of(text)):
        for clause in CLAUSE_BREAK.split(sentence):
            words = clause.split()
            words = words[next((i for i, w in enumerate(words) if re.search("[A-Za-z]", w)), len(words)) + 1:]
            names = [m[1] for w in words if w[0].isalpha() and (m := ALONE.fullmatch(w)) and _capitalised(m[1])]
            if 2 * len(names) <= len(words):
                found.update(name.lower() for name in names)
    return found


def _capitalised(word: str) -> bool:
    return word[0].isupper() and word[1:].islower()


def _product_like(word: str) -> bool:
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:])


COMPOUND = re.compile(r"(?<![\w:])[A-Z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*(?![\w:])")  # ``ReportJob``, alone
HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*")  # ``GraphQL``: ``Graph``, ``QL``


def compound_names(text: str) -> dict[str, str]:
    """Each CamelCase compound written alone (not part of ``A::B``), as its term, with its last word:
    ``ReportJob`` -> ``{"reportjob": "Job"}``."""
    return {w.lower(): HUMP.findall(w)[-1] for w in COMPOUND.findall(text[:MAX_QUERY_CHARS])}
