#!/usr/bin/env python
"""Prepares the wordcount input: texts made persistent round-robin over the backends and a
TextCollection shared under an alias ("Words"). Texts come from files or are generated."""
import argparse
import pathlib
import random
import sys
import time

from dataclay import api
from dataclay.exceptions import AliasDoesNotExistError


def generated_texts(count: int, size: int, seed: int, vocabulary_size: int = 20000, draw: int = 4096):
    """`count` texts of about `size` bytes of Zipf-distributed words out of `vocabulary_size` ones,
    drawn `draw` at a time (the same texts for the same arguments)."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(vocabulary_size)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    for _ in range(count):
        words, length = [], 0
        while length < size:
            chunk = rng.choices(vocabulary, weights, k=draw)
            words.extend(chunk)
            length += sum(len(w) + 1 for w in chunk)
        yield " ".join(words)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--alias", default="Words")
    parser.add_argument("--texts", type=int, default=8, help="number of generated texts")
    parser.add_argument("--size", default="256K", help="size of each generated text (e.g. 256K, 8M)")
    parser.add_argument("--files", type=pathlib.Path, help="a directory of text files to use instead")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    api.init()
    from WordCount.classes import Text, TextCollection

    try:
        TextCollection.delete_alias(args.alias)
    except AliasDoesNotExistError:
        pass
    if args.files:
        contents = (p.read_text(errors="replace") for p in sorted(args.files.iterdir()) if p.is_file())
    else:
        contents = generated_texts(args.texts, parse_size(args.size), args.seed)
    backends = sorted(api.get_backends())
    start = time.perf_counter()
    texts = []
    for i, content in enumerate(contents):
        text = Text(content)
        text.make_persistent(backend_id=backends[i % len(backends)])
        texts.append(text)
    collection = TextCollection(texts)
    collection.make_persistent(alias=args.alias, backend_id=backends[0])
    print(f"persisted {len(texts)} texts over {len(backends)} backends as {args.alias!r} "
          f"in {time.perf_counter() - start:.2f} s")
    api.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
