"""The NEXTGenIO white paper's wordcount program, with its COMPSs tasks run by the local stand-in
for the COMPSs runtime, runs against a real cluster and agrees with a local count."""
import subprocess
import sys

from harness.wordcount import EXAMPLE, expected_top_words, printed_top_words


def test_wordcount_listing_counts_the_words_of_the_shared_collection(cluster, tmp_path):
    # setup
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "wordcount", str(EXAMPLE / "model"), "python")
    cluster.dataclaycmd("GetStubs", cluster.admin_user(), "-", "wordcount", str(tmp_path / "stubs"))
    env = dict(cluster.env, PYTHONPATH=str(tmp_path / "stubs"))
    prepared = subprocess.run([sys.executable, str(EXAMPLE / "prepare.py"), "--texts", "6", "--size", "64K"],
                              env=env, capture_output=True, text=True, timeout=300)
    assert prepared.returncode == 0, prepared.stderr
    # run
    counted = subprocess.run([sys.executable, str(EXAMPLE / "wordcount.py"), "Words"], env=env,
                             capture_output=True, text=True, timeout=300)
    # verify
    assert counted.returncode == 0, counted.stderr
    assert "Ready to count words from 6 different texts" in counted.stdout
    assert printed_top_words(counted.stdout) == expected_top_words(6, 64 * 1024, 1)
