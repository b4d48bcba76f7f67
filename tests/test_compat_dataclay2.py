"""Programs written for dataClay 2 run unchanged on a real cluster: the NEXTGenIO white paper's
wordcount as its users wrote it (api.init(), the model's stubs, `is_persistent()` called and read as
a property, errors caught as DataClayException), sequential, without COMPSs."""
import collections
import json
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "wordcount"

# The white paper's program (section 3.4.1.4) without its @task decorators, the way a dataClay 2
# user ran it sequentially: every name it uses is dataClay 2's.
WHITE_PAPER_WORDCOUNT = textwrap.dedent("""
    import json
    import sys

    from dataclay.api import init, finish, get_backends
    from dataclay.exceptions import DataClayException

    init()

    from WordCount.classes import Text, TextCollection, TextStats


    def prepare(alias, contents):
        try:
            return TextCollection.get_by_alias(alias)
        except DataClayException:
            pass
        backends = sorted(get_backends())
        texts = []
        for i, content in enumerate(contents):
            text = Text(content)
            text.make_persistent(backend_id=backends[i % len(backends)])
            texts.append(text)
        collection = TextCollection(texts)
        collection.make_persistent(alias)
        return collection


    def word_count(text):
        return text.word_count()


    def merge_word_counts(result, partial):
        result.merge_word_counts(partial)


    def count_words(text_collection):
        result = TextStats(dict())
        if not result.is_persistent():
            result.make_persistent()
        for text in text_collection.texts:
            merge_word_counts(result, word_count(text))
        return result


    if __name__ == "__main__":
        contents = [" ".join(f"w{(i * 7 + j) % 23}" for j in range(200 + 50 * i)) for i in range(5)]
        words = prepare(sys.argv[1], contents)
        again = prepare(sys.argv[1], ["never used"])
        result = count_words(words)
        try:
            TextStats.get_by_alias("no-such-alias")
            missing = None
        except DataClayException as e:
            missing = [type(e).__name__, str(e)]
        volatile = TextStats(dict())
        flags = [bool(words.is_persistent), bool(volatile.is_persistent), volatile.is_persistent()]
        print(json.dumps({"top": result.top_words(5), "persistent": result.is_persistent(), "flags": flags,
                          "same": again.getID() == words.getID(), "texts": len(words.texts),
                          "where": sorted({t.get_location() for t in words.texts}), "backends": sorted(get_backends()),
                          "missing": missing}))
        finish()
""")


def test_the_white_paper_wordcount_written_for_dataclay_2_runs_unchanged(cluster, tmp_path):
    # setup: the model registered and its stubs where the program imports them from
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "wordcount", str(EXAMPLE / "model"), "python")
    cluster.dataclaycmd("GetStubs", cluster.admin_user(), "-", "wordcount", str(tmp_path / "stubs"))
    program = tmp_path / "wordcount2.py"
    program.write_text(WHITE_PAPER_WORDCOUNT)
    env = dict(cluster.env, PYTHONPATH=str(tmp_path / "stubs"))
    # run
    result = subprocess.run([sys.executable, str(program), "Words2"], env=env, capture_output=True, text=True,
                            timeout=300)
    # verify
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    expected = collections.Counter()
    for i in range(5):
        expected.update(f"w{(i * 7 + j) % 23}" for j in range(200 + 50 * i))
    assert out["top"] == [list(kv) for kv in sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:5]]
    assert out["persistent"] is True and out["same"] is True and out["texts"] == 5
    assert out["flags"] == [True, False, False]  # is_persistent as a property too (dataClay 4 reads it so)
    assert out["where"] == out["backends"]
    assert out["missing"][0] == "AliasDoesNotExistError" and "no-such-alias" in out["missing"][1]
