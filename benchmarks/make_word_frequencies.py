"""Write gemdoc/data/word_frequencies.txt: how common each ordinary English word is.

    python benchmarks/make_word_frequencies.py    # needs the `wordfreq` package; gemdoc itself does not

The evidence gate (gemdoc/evidence.py) weighs a question's word that the bundle's docs lack by how
rare the word is in general English: "tomorrow" or "payments" missing says little, "graphql" missing
says the subject is not here. Each line is a Zipf frequency (log10 of uses per billion words, one
decimal) followed by every lower-case word with that frequency, most frequent first; words rarer than
MIN_ZIPF are left out (gemdoc reads a word not listed as rare).
"""

import re
from collections import defaultdict
from pathlib import Path

import wordfreq

OUT = Path(__file__).resolve().parent.parent / "gemdoc" / "data" / "word_frequencies.txt"
MIN_ZIPF = 2.5
CANDIDATES = 300_000
WORD = re.compile(r"[a-z][a-z0-9]*")  # what gemdoc.terms makes of a word, letters and digits


def main() -> None:
    by_zipf: dict[float, list[str]] = defaultdict(list)
    for word in wordfreq.top_n_list("en", CANDIDATES):
        zipf = round(wordfreq.zipf_frequency(word, "en"), 1)
        if zipf >= MIN_ZIPF and WORD.fullmatch(word):
            by_zipf[zipf].append(word)
    lines = [f"{z:.1f} {' '.join(sorted(words))}\n" for z, words in sorted(by_zipf.items(), reverse=True)]
    OUT.write_text("".join(lines))
    print(f"{sum(len(w) for w in by_zipf.values())} words -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
