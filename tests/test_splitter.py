import itertools
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gemdoc import splitter

MD = """Intro before any heading.

# Guide

Opening words.

```ruby
# a comment, not a heading
x = 1
```

    # indented code, not a heading

Setext title
------------

Under the setext heading.

## Deeper

Deep text.
"""


def titles(chunks):
    return [c.title for c in chunks]


def test_markdown_headings_fences_and_setext():
    chunks = splitter.chunk_document(MD, "README.md", "readme")
    assert titles(chunks) == ["README.md", "Guide", "Guide > Setext title", "Guide > Deeper"]
    guide = chunks[1]
    assert "# a comment, not a heading" in guide.body and "# indented code" in guide.body
    assert guide.line == 3 and chunks[2].line == 14
    assert {c.source_type for c in chunks} == {"readme"}


def test_a_heading_without_text_or_children_is_kept():
    chunks = splitter.chunk_document("# Top\n## Empty leaf\n## Full\ntext\n", "a.md", "doc")
    assert titles(chunks) == ["Top > Empty leaf", "Top > Full"]


def test_rdoc_headings_and_verbatim():
    text = "= Title\n\nIntro.\n\n== Part\n\nText.\n\n  = verbatim, not a heading\n\n=== Sub\nMore.\n"
    chunks = splitter.chunk_document(text, "doc/guide.rdoc", "doc")
    assert titles(chunks) == ["Title", "Title > Part", "Title > Part > Sub"]
    assert "= verbatim, not a heading" in chunks[1].body


def test_long_sections_split_on_paragraphs_with_suffix():
    paragraphs = [f"Paragraph {i} " + "word " * 80 for i in range(12)]
    text = "# Long\n\n" + "\n\n".join(paragraphs)
    chunks = splitter.chunk_document(text, "guide.md", "guides")
    assert len(chunks) > 2
    assert all(re.fullmatch(rf"Long · \d+/{len(chunks)}", c.title) for c in chunks)
    assert all(len(c.body) <= splitter.TARGET for c in chunks)
    assert all(c.body.startswith("Paragraph") for c in chunks)  # cut between paragraphs
    assert {c.heading for c in chunks} == {"Long"}


def test_one_enormous_line_is_cut_not_dropped():
    text = "# Big\n\n" + "x" * 5000
    chunks = splitter.chunk_document(text, "big.md", "doc")
    assert "".join(c.body for c in chunks) == "x" * 5000


def test_links_and_markup_are_removed_from_titles():
    chunks = splitter.chunk_document("# Use [the API](http://x) `now`\n\ntext\n", "a.md", "doc")
    assert chunks[0].title == "Use the API now"


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.from_regex(r"#{1,6} [A-Za-z ]{1,20}", fullmatch=True),
            st.from_regex(r"={1,3} [A-Za-z]{1,10}", fullmatch=True),
            st.just("```"),
            st.just(""),
            st.from_regex(r"[A-Za-z0-9 ,.]{0,200}", fullmatch=True),
        ),
        max_size=60,
    ),
    st.sampled_from(["a.md", "a.rdoc", "a.txt"]),
)
def test_no_text_is_dropped(lines, name):
    """Every word of the input is in some chunk's body or title."""
    text = "\n".join(lines)
    chunks = splitter.chunk_document(text, name, "doc")
    kept = set()
    for c in chunks:
        kept.update(_words(c.body))
        kept.update(_words(c.title))
    kept.update(_words(name))
    assert set(_words(text)) <= kept


def test_a_heading_reads_as_the_patterns_that_define_it_in_linear_time():
    """The headings are those of ``^ {0,3}(#{1,6})[ \\t]+(.+?)[ \\t#]*$`` (Markdown) and
    ``^(={1,6})[ \\t]*(.+?)[ \\t]*$`` (RDoc), on every line of up to six of the characters that matter. A line of
    200 KB, which those patterns take over a minute on, is read at once as text (a gem's README is untrusted; the
    store's writer lock is held meanwhile), so that no heading of that size is repeated in each chunk title under it."""
    atx, rdoc = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$"), re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*$")
    for size in range(7):
        for chars in itertools.product("# \ta=", repeat=size):
            line = "".join(chars)
            for pattern, read in ((atx, splitter._atx), (rdoc, splitter._rdoc)):
                match = pattern.match(line)
                assert read(line) == ((len(match[1]), match[2]) if match else None), (line, pattern.pattern)
    start = time.monotonic()
    for kind, mark, name in (("markdown", "#", "README.md"), ("rdoc", "=", "README.rdoc")):
        for title in ("a" + " " * 200_000 + "b", "[" * 200_000):
            text = f"{mark} {title}\n\n" + "A paragraph of text.\n\n" * 2_000
            assert not splitter.sections(text, kind)[0].path
            assert sum(len(c.title) for c in splitter.chunk_document(text, name, "readme")) < 100_000
    assert splitter.sections("# " + "a" * (splitter.MAX_HEADING - 2) + "\n", "markdown")[0].path == ["a" * 398]
    assert time.monotonic() - start < 5  # the patterns: over a minute
