"""The wordcount example (examples/wordcount) as the integration tests check it: the top words its
program printed, and the top words of the texts its prepare.py generated, counted here."""
from __future__ import annotations

import ast
import collections
import pathlib
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "wordcount"


def printed_top_words(stdout: str) -> list:
    """The (word, count) pairs wordcount.py printed under "# Top 10:"."""
    return ast.literal_eval(stdout.split("# Top 10:\n", 1)[1].strip())


def expected_top_words(texts: int, size: int, seed: int) -> list:
    """The ten most frequent (word, count) pairs, ties by word, of the texts `prepare.py --texts
    texts --size size --seed seed` generates, counted in this process."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from prepare import generated_texts
    counts = collections.Counter()
    for text in generated_texts(texts, size, seed):
        counts.update(text.split())
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
