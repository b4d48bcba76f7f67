#!/usr/bin/env python
"""The NEXTGenIO white paper's wordcount (section 3.4.1.4) with PyCOMPSs tasks. Each text counts its
words in the backend that stores it (task `word_count`); the partial counts are merged into one
persistent TextStats (task `merge_word_counts`, whose `result` is INOUT: COMPSs renames it with a new
version per merge and consolidates the last one into the original at `compss_barrier`).

Under COMPSs (`runcompss --storage_conf=<client config> ... wordcount.py`) the COMPSs runtime runs the
tasks and has already called storage.api.init. Without COMPSs, storage.local_runtime runs the same
tasks on --workers forked worker processes; --workers 0 runs them one after another in this process
(the sequential run). The model is WordCount.classes (register it, then `dataclaycmd GetStubs`)."""
import argparse
import sys
import time

try:
    from pycompss.api.api import compss_barrier
    from pycompss.api.parameter import INOUT
    from pycompss.api.task import task
    UNDER_COMPSS = True
except ImportError:
    from storage.local_runtime import INOUT, LocalRuntime, compss_barrier, task
    UNDER_COMPSS = False

from WordCount.classes import TextCollection, TextStats


@task(returns=dict)
def word_count(text):
    """How many times each word occurs in `text` (counted in the backend that stores it)."""
    return text.word_count()


@task(result=INOUT)
def merge_word_counts(result, partial):
    """Adds a partial count to `result` (under COMPSs, to the version of it this task was given)."""
    result.merge_word_counts(partial)


def count_words(text_collection):
    """The white paper's count_words: one word_count task per text, each merged into one TextStats."""
    result = TextStats(dict())
    result.make_persistent()
    texts = text_collection.texts
    total_n_texts = len(texts)
    print("Ready to count words from %d different texts" % total_n_texts)
    for text in texts:
        partialResult = word_count(text)
        merge_word_counts(result, partialResult)
    # Wait for result to end its reduction
    compss_barrier()
    return result


def run(alias: str, result_alias: str | None, mode: str) -> None:
    """Counts the words of the collection shared under `alias` and prints the top 10 (last)."""
    print(" # Start WordCount application #")
    words = TextCollection.get_by_alias(alias)
    start = time.perf_counter()
    res = count_words(words)
    elapsed = time.perf_counter() - start
    if result_alias:
        _replace_alias(res, result_alias)
    print(" # WordCount finished in %.3f s (%s)" % (elapsed, mode))
    print(" # Top 10:\n %s" % res.top_words(10))


def _replace_alias(stats, alias: str) -> None:
    from dataclay.exceptions import AliasDoesNotExistError
    try:
        TextStats.delete_alias(alias)
    except AliasDoesNotExistError:
        pass
    stats.make_persistent(alias=alias)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("alias", nargs="?", default="Words", help="alias of the TextCollection (default Words)")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the local runtime (default 2; 0: the sequential run in this "
                             "process); under COMPSs the runtime's own workers are used")
    parser.add_argument("--config", help="client configuration file (default: $DATACLAY_HOME/client.properties "
                                         "and DATACLAY_* variables)")
    parser.add_argument("--result-alias", help="also keep the resulting TextStats under this alias")
    args = parser.parse_args()
    if args.workers < 0:
        parser.error(f"--workers must be 0 or more, not {args.workers}")

    if UNDER_COMPSS:
        run(args.alias, args.result_alias, "COMPSs")
    elif args.workers == 0:
        from storage import api
        api.init(config_file_path=args.config)
        try:
            run(args.alias, args.result_alias, "sequential")
        finally:
            api.finish()
    else:
        with LocalRuntime(workers=args.workers, config_file=args.config):
            run(args.alias, args.result_alias, f"local runtime, {args.workers} worker processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
