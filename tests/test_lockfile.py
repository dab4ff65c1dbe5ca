import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemdoc import lockfile
from gemdoc.errors import LockfileError

FULL = """GIT
  remote: https://github.com/rails/rails.git
  revision: 0123456789abcdef0123456789abcdef01234567
  branch: main
  specs:
    rails (7.2.0.alpha)
      actionpack (= 7.2.0.alpha)

PATH
  remote: ../mygem
  specs:
    mygem (0.1.0)

GEM
  remote: https://rubygems.org/
  specs:
    nokogiri (1.16.0-x86_64-linux)
      racc (~> 1.4)
    nokogiri (1.16.0-arm64-darwin)
    racc (1.7.3)
    rake (13.1.0)

PLATFORMS
  x86_64-linux

DEPENDENCIES
  mygem!
  nokogiri (~> 1.16)
  rails!
  rake

BUNDLED WITH
   2.5.3
"""


def test_sections_sources_and_platforms():
    lock = lockfile.parse(FULL)
    by_name = {(g.name, g.platform): g for g in lock.gems}
    assert by_name[("rails", None)].source == "git"
    assert by_name[("rails", None)].revision.startswith("0123456789ab")
    assert by_name[("mygem", None)].source == "path"
    assert by_name[("mygem", None)].remote == "../mygem"
    nokogiri = by_name[("nokogiri", "x86_64-linux")]
    assert (nokogiri.version, nokogiri.source) == ("1.16.0", "gem")
    assert ("nokogiri", "arm64-darwin") in by_name
    assert lock.direct == ["mygem", "nokogiri", "rails", "rake"]
    assert lock.bundled_with == "2.5.3"


def test_scope_direct_by_default_transitive_with_all():
    lock = lockfile.parse(FULL)
    assert [g.name for g in lock.select(include_transitive=False)] == ["mygem", "nokogiri", "rails", "rake"]
    assert [g.name for g in lock.select(include_transitive=True)] == ["mygem", "nokogiri", "racc", "rails", "rake"]
    assert [g.platform for g in lock.variants("nokogiri")] == ["x86_64-linux", "arm64-darwin"]


def test_sha256_is_of_the_file_bytes_less_a_bom_and_crlf(tmp_path):
    path = tmp_path / "Gemfile.lock"
    path.write_text(FULL)
    assert lockfile.load(path).sha256 == hashlib.sha256(FULL.encode()).hexdigest()
    path.write_bytes(b"\xef\xbb\xbf" + FULL.replace("\n", "\r\n").encode())  # the same lock, saved on Windows
    assert lockfile.load(path).sha256 == hashlib.sha256(FULL.encode()).hexdigest()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "holds no gems"),
        ("  rake (13.0.6)\n", "before any section"),
        ("GEM\n  specs:\n    rake 13.0.6\n", "unreadable spec"),
        ("GEM\n  specs:\n    rake (not-a-version)\n", "unreadable spec"),
        ("DEPENDENCIES\n  rake (>= 1\n", "unreadable dependency"),
    ],
)
def test_malformed_lockfile_names_the_problem(text, fragment):
    with pytest.raises(LockfileError, match=fragment):
        lockfile.parse(text)


def test_missing_and_unreadable(tmp_path):
    with pytest.raises(LockfileError, match="no Gemfile.lock"):
        lockfile.find(tmp_path)
    bad = tmp_path / "Gemfile.lock"
    bad.write_bytes(b"GEM\n  specs:\n    r\xff (1.0)\n")
    with pytest.raises(LockfileError, match="not UTF-8"):
        lockfile.load(bad)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_lockfile_error(text):
    try:
        lock = lockfile.parse(text)
    except LockfileError:
        return
    for gem in lock.gems:
        assert gem.name and gem.version[0].isdigit()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True),
            st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,3}){0,3}(\.pre)?", fullmatch=True),
            st.sampled_from([None, "x86_64-linux", "arm64-darwin", "java"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_generated_lockfiles_round_trip(specs):
    lines = ["GEM", "  remote: https://rubygems.org/", "  specs:"]
    lines += [f"    {n} ({v}{'-' + p if p else ''})" for n, v, p in specs]
    lines += ["", "DEPENDENCIES"] + [f"  {n}" for n, _, _ in specs]
    lock = lockfile.parse("\n".join(lines) + "\n")
    assert [(g.name, g.version, g.platform) for g in lock.gems] == specs


@pytest.mark.parametrize("line, problem", [
    ("    ../../../../tmp/x (1.0)", "not a gem name"),
    ("    .hidden (1.0)", "not a gem name"),
    ("    -rf (1.0)", "not a gem name"),
    ("    123 (1.0)", "not a gem name"),
    ("    a*b (1.0)", "not a gem name"),
    ("    rake (1..0)", "not a gem version"),
    ("    rake (1.0-../../x)", "not a gem platform"),
    ("    rake (1.0-.x)", "not a gem platform"),
])  # fmt: skip
def test_an_entry_rubygems_would_reject_is_skipped_with_its_line(line, problem):
    text = f"GEM\n  remote: https://rubygems.org/\n  specs:\n    racc (1.7.3)\n{line}\n\nDEPENDENCIES\n  racc\n"
    lock = lockfile.parse(text)
    assert [g.name for g in lock.gems] == ["racc"]
    assert len(lock.malformed) == 1 and lock.malformed[0].startswith("Gemfile.lock:5: malformed lockfile entry")
    assert problem in lock.malformed[0] and lock.malformed[0].endswith("skipped")


def test_a_git_source_without_a_hexadecimal_revision_is_skipped():
    text = FULL.replace("revision: 0123456789abcdef0123456789abcdef01234567", "revision: ../../../*")
    lock = lockfile.parse(text)
    assert "rails" not in [g.name for g in lock.gems] and "mygem" in [g.name for g in lock.gems]
    assert len(lock.malformed) == 1 and "hexadecimal revision" in lock.malformed[0]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="./-_aZ09*~", min_size=1, max_size=12), st.text(alphabet="./-_a09", min_size=1, max_size=8))
def test_a_kept_entry_is_never_a_path(name, version):
    try:
        lock = lockfile.parse(f"PATH\n  remote: .\n  specs:\n    {name} ({version})\n\nDEPENDENCIES\n  x\n")
    except LockfileError:
        return
    for gem in lock.gems:
        text = gem.name + gem.version + (gem.platform or "")
        assert "/" not in text and "*" not in text and "~" not in text and not gem.name.startswith((".", "-", "_"))
    assert len(lock.gems) + len(lock.malformed) == 1
