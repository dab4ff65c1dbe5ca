"""Every figure in the README's benchmark section is the last output of benchmarks/."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import report  # noqa: E402


def test_readme_benchmark_section_matches_the_results():
    readme = (ROOT / "README.md").read_text()
    assert report.rewrite(readme, report.render()) == readme, "run `python benchmarks/report.py`"


def test_the_section_is_there():
    assert "### Retrieval quality" in (ROOT / "README.md").read_text()
