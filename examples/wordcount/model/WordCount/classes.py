"""The wordcount model of the NEXTGenIO white paper (section 3.4.1.4): a collection of texts spread
over the backends, each counting its own words where it is stored, and the merged statistics."""
from collections import Counter

from dataclay import DataClayObject, activemethod


class Text(DataClayObject):
    """One text; `word_count` runs in the backend that stores it."""

    content: str

    def __init__(self, content: str):
        self.content = content

    @activemethod
    def word_count(self) -> dict:
        """How many times each word occurs in this text."""
        return dict(Counter(self.content.split()))


class TextCollection(DataClayObject):
    """The texts to count, usually shared under the alias "Words"."""

    texts: list

    def __init__(self, texts=None):
        self.texts = list(texts or [])

    @activemethod
    def add_text(self, text: Text) -> None:
        """Appends a text to the collection."""
        self.texts.append(text)


class TextStats(DataClayObject):
    """Word counts merged from partial results."""

    counts: dict

    def __init__(self, counts: dict):
        self.counts = dict(counts)

    @activemethod
    def merge_word_counts(self, partial: dict) -> None:
        """Adds a partial result (word -> count) to the totals."""
        counts = self.counts
        for word, n in partial.items():
            counts[word] = counts.get(word, 0) + n

    @activemethod
    def top_words(self, n: int) -> list:
        """The `n` most frequent words with their counts, most frequent first (ties alphabetically)."""
        return sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))[:n]
