#!/usr/bin/env python
"""The NEXTGenIO white paper's Figure 13 on this machine: the wordcount of 64 text files of 32, 128
and 512 MiB, with a prepare-and-persist phase and a count phase, per store engine.

Each size and engine gets a fresh two-backend cluster, then runs the example's own programs as a
user would (examples/wordcount):
- prepare+persist: `prepare.py --files DIR` reads the files one by one and makes each text
  persistent, round robin over the backends, and the TextCollection under an alias;
- count: `wordcount.py --workers N`, the COMPSs path on the local COMPSs stand-in
  (storage.local_runtime): one word_count task per text, counted in the backend that stores it, and
  one merge_word_counts task per text on versions of one TextStats, consolidated at the barrier.
Plain Python runs the same model code on local objects, with no store and no tasks, for reference.

Fewer files than asked are used where the data would not fit this machine's memory with its
copies (the store, the execution environments, the client); the cap and the peak memory each run
used are printed, so what does not fit is measured, not guessed. PostgreSQL runs with fsync on;
pmem engines use pools under /dev/shm with PMEM_IS_PMEM_FORCE=1. --png draws the figure;
--json keeps the figures, and --from-json redraws them without running anything."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from _cluster import REPO, Cluster
from harness.postgres import PostgresServer  # the harness is importable once _cluster is

from dataclay._internal import engines as engine_view

EXAMPLE = REPO / "examples" / "wordcount"
MODEL = EXAMPLE / "model"
sys.path.insert(0, str(EXAMPLE))
from prepare import generated_texts  # the example's own text generator, importable once on the path

# every engine, the memory-only baseline first (the others are compared with it)
ENGINES = tuple(e.name for e in sorted(engine_view.ENGINES, key=lambda e: e.durable))
BASELINE = ENGINES[0]
PLAIN = "plain Python"

PERSISTED = re.compile(r"^persisted (\d+) texts .* in ([0-9.]+) s$", re.M)
COUNTED = re.compile(r"# WordCount finished in ([0-9.]+) s")
TOP = re.compile(r"# Top 10:\n(.*)", re.S)

# The same model code on local objects in one process: prints {"persist": s, "count": s, "top": [...]}.
PLAIN_RUN = """
import json, pathlib, sys, time
from WordCount.classes import Text, TextCollection, TextStats
start = time.perf_counter()
words = TextCollection([Text(f.read_text()) for f in sorted(pathlib.Path(sys.argv[1]).iterdir())])
read = time.perf_counter()
result = TextStats(dict())
for text in words.texts:
    result.merge_word_counts(text.word_count())
done = time.perf_counter()
print(json.dumps({"persist": read - start, "count": done - read, "top": str(result.top_words(10))}))
"""

# What a size costs this machine's memory (measured: the README's peak memory column): each stored
# text once in the store, with the pool's slack (STORED_PER_TEXT_BYTE), and, whatever the number of
# files, the servers and the environments' resident budget (WORKING_BYTES), the copies of the one
# text on its way between client, Data Service and environment (IN_FLIGHT_PER_TEXT_BYTE), and the
# texts the workers' word_count calls split at once: the white paper's
# `Counter(self.content.split())` makes 15 bytes of list and word objects per byte of text
# (measured on these texts; WORKING_PER_TEXT_BYTE). Fitted to the peaks of 32 x 128 MiB with 2
# workers (13.3 GiB) and 4 x 512 MiB with 1 worker (21.3 GiB).
STORED_PER_TEXT_BYTE = 1.35
WORKING_PER_TEXT_BYTE = 16
IN_FLIGHT_PER_TEXT_BYTE = 12
WORKING_BYTES = 4 << 30
RESIDENT_MB = 1024  # each environment's DATACLAY_EE_RESIDENT_MB, the same for every size

SEED = 7
CHUNK = 32 << 20  # files bigger than this are made of generated chunks of this size
CHUNKS = 16


class MemoryPeak:
    """The most memory the machine used above what it used when this started (MemAvailable, so
    tmpfs pools and every process count; the page cache of the text files does not)."""

    def __init__(self) -> None:
        self.start = available_bytes()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.start - available_bytes())

    def __enter__(self) -> "MemoryPeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def available_bytes() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) << 10
    raise RuntimeError("/proc/meminfo has no MemAvailable")


def write_texts(directory: pathlib.Path, count: int, size: int, chunks: pathlib.Path) -> None:
    """`count` files of about `size` bytes of Zipf-distributed words, the same for every engine: the
    example's generated texts, from a larger vocabulary drawn in larger chunks. Files bigger than a
    chunk are made of consecutive chunks, rotating over a pool of CHUNKS, as generating words
    costs about 5 s per 32 MiB here."""
    if size <= CHUNK:
        for n, text in enumerate(generated_texts(count, size, SEED, vocabulary_size=50000, draw=65536)):
            (directory / f"text-{n:03d}.txt").write_text(text)
        return
    if not chunks.exists():
        chunks.mkdir()
        for n, text in enumerate(generated_texts(CHUNKS, CHUNK, SEED, vocabulary_size=50000, draw=65536)):
            (chunks / f"chunk-{n:03d}.txt").write_text(text)
    pool = sorted(chunks.iterdir())
    for n in range(count):
        with open(directory / f"text-{n:03d}.txt", "wb") as out:
            for k in range(-(-size // CHUNK)):
                if k:
                    out.write(b" ")
                with open(pool[(n + k) % len(pool)], "rb") as chunk:
                    shutil.copyfileobj(chunk, out)


def run(command: list[str], env: dict, what: str) -> str:
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=7200)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def run_plain(texts: pathlib.Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(MODEL), os.environ.get("PYTHONPATH")])))
    with MemoryPeak() as memory:
        out = run([sys.executable, "-c", PLAIN_RUN, str(texts)], env, "plain Python wordcount")
    return dict(json.loads(out.strip().splitlines()[-1]), peak_bytes=memory.peak)


def run_engine(engine: str, texts: pathlib.Path, files: int, size_mib: int, workers: int,
               postgres: PostgresServer | None) -> dict:
    """One engine's run on a fresh cluster: prepare.py, then wordcount.py with `workers`."""
    # each backend's pool holds half the texts, pickled, with room for the TextStats versions; the memory
    # engine's JVM heap holds them instead, so every engine's Data Service gets a heap that could
    per_backend_mib = -(-files // 2) * size_mib
    extra = {"DATACLAY_EE_RESIDENT_MB": str(RESIDENT_MB), "DATACLAY_EE_MEMORY_MB": str(environment_memory_mb(size_mib, workers)),
             "DATACLAY_JAVA_OPTS": f"-Xmx{per_backend_mib * 5 // 4 + 2048}m",
             # one text is one field: bigger than the default 256M needs a higher bound (up to 768M)
             "DATACLAY_MAX_VALUE_SIZE": f"{max(256, size_mib + 64)}M"}
    if engine_view.engine(engine).database:
        extra["DATACLAY_STORE_URL"] = postgres.create_database(f"wordcount_{int(time.time() * 1000)}")
    pool_mib = max(512, per_backend_mib * 5 // 4 + 256)
    with MemoryPeak() as memory:
        cluster = Cluster(backends=2, store=engine, store_size=f"{pool_mib}M", extra_env=extra)
        try:
            cluster.start()
            cluster.register_models(namespace="WordCount", path=MODEL)
            env = dict(cluster.env, PYTHONPATH=os.pathsep.join([str(MODEL), cluster.env["PYTHONPATH"]]))
            prepared = run([sys.executable, str(EXAMPLE / "prepare.py"), "--files", str(texts)], env, "prepare.py")
            counted = run([sys.executable, str(EXAMPLE / "wordcount.py"), "Words", "--workers", str(workers)], env,
                          "wordcount.py")
        finally:
            cluster.stop()
    persisted = PERSISTED.search(prepared)
    return {"persist": float(persisted.group(2)), "count": float(COUNTED.search(counted).group(1)),
            "top": TOP.search(counted).group(1).strip(), "peak_bytes": memory.peak}


def files_that_fit(size: int, memory_share: float, workers: int) -> int:
    """How many texts of `size` bytes fit in `memory_share` of the memory available now, with `workers`
    word_count calls at once."""
    working = (workers * WORKING_PER_TEXT_BYTE + IN_FLIGHT_PER_TEXT_BYTE) * size + WORKING_BYTES
    return max(0, int((available_bytes() * memory_share - working) / (size * STORED_PER_TEXT_BYTE)))


def environment_memory_mb(size_mib: int, workers: int) -> int:
    """DATACLAY_EE_MEMORY_MB for texts of `size_mib`: the default 4096, or room for every worker's
    word_count in one environment beside the resident budget and the text being loaded."""
    return max(4096, workers * WORKING_PER_TEXT_BYTE * size_mib + 2 * RESIDENT_MB + 2 * size_mib)


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def summary(runs: list[dict]) -> dict:
    """The median phases of a run's rounds, its peak memory, and each round's total (in round order)."""
    return {"persist": median([r["persist"] for r in runs]), "count": median([r["count"] for r in runs]),
            "peak_gib": max(r["peak_bytes"] for r in runs) / (1 << 30),
            "totals": [r["persist"] + r["count"] for r in runs]}


def print_size(size_mib: int, files: int, workers: int, results: dict) -> None:
    print(f"{files} files of {size_mib} MiB ({files * size_mib / 1024:.1f} GiB), {workers} worker(s)")
    print(f"  {'run':<14}{'prepare+persist s':>18}{'count s':>9}{'total s':>9}{'vs ' + BASELINE:>11}"
          f"{'peak memory GiB':>17}")
    base = results.get(BASELINE)
    for name, s in results.items():
        total = s["persist"] + s["count"]
        ratio = f"{total / (base['persist'] + base['count']) - 1:+11.1%}" if base else " " * 11
        print(f"  {name:<14}{s['persist']:>18.2f}{s['count']:>9.2f}{total:>9.2f}{ratio}{s['peak_gib']:>17.1f}")
    rounds = [s.get("totals", []) for s in results.values()]
    if min(map(len, rounds), default=0) > 1:
        # each round's engines ran right after that round's baseline: compare within a round
        print(f"  {len(rounds[0])} rounds: total s per round, its spread ((max - min) / median), and each round's total"
              f" against that round's {BASELINE}" if base else f"  {len(rounds[0])} rounds: total s per round")
        for name, s in results.items():
            totals = s["totals"]
            spread = (max(totals) - min(totals)) / median(totals)
            # a run that failed in some round has fewer totals, which no longer line up with the rounds
            aligned = base and len(totals) == len(base["totals"])
            against = "  ".join(f"{t / b - 1:+.1%}" for t, b in zip(totals, base["totals"])) if aligned else ""
            print(f"  {name:<14}{' '.join(f'{t:7.1f}' for t in totals)}   spread {spread:5.1%}   {against}")


def draw(figures: dict, png: pathlib.Path, title: str) -> None:
    """Grouped bars, one group per file size and one bar per run, each bar the prepare+persist phase
    with the count phase stacked on it, as the white paper's Figure 13."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    sizes = list(figures)
    names = [n for n in [PLAIN, *ENGINES] if any(n in figures[s]["runs"] for s in sizes)]
    width = 0.8 / len(names)
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(3.6 + 2.6 * len(sizes), 4.8))
    for i, name in enumerate(names):
        for j, size in enumerate(sizes):
            s = figures[size]["runs"].get(name)
            x = j + (i - (len(names) - 1) / 2) * width
            if s is None:
                ax.text(x, 0, "failed", rotation=90, ha="center", va="bottom", fontsize=7)
                continue
            ax.bar(x, s["persist"], width, color=colours(i), edgecolor="black", linewidth=0.4)
            ax.bar(x, s["count"], width, bottom=s["persist"], color=colours(i), alpha=0.45, hatch="//",
                   edgecolor="black", linewidth=0.4)
    ax.set_xticks(range(len(sizes)), [f"{figures[s]['files']} x {s} MiB, {figures[s].get('workers', 2)} worker(s)"
                                      for s in sizes])
    ax.set_ylabel("seconds")
    ax.set_title(title, fontsize=9)
    legend = [Patch(facecolor=colours(i), edgecolor="black", label=name) for i, name in enumerate(names)]
    legend += [Patch(facecolor="white", edgecolor="black", label="prepare+persist (solid)"),
               Patch(facecolor="white", edgecolor="black", hatch="//", label="count (hatched, stacked)")]
    ax.legend(handles=legend, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes-mib", default="32,128,512", help="sizes of the text files, in MiB")
    parser.add_argument("--files", type=int, default=64, help="files per size, at most (the paper's 64)")
    parser.add_argument("--max-gib", type=int, default=1 << 20,
                        help="text per size, at most, in GiB (fewer files of a size past it; default: no bound)")
    parser.add_argument("--memory-share", type=float, default=0.8,
                        help="share of the memory available at start that one size's run may use (default 0.8)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local COMPSs runtime")
    parser.add_argument("--rounds", type=int, default=1, help="runs per engine and size (the median is reported)")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain Python reference")
    parser.add_argument("--png", type=pathlib.Path, help="draw the figure into this PNG file")
    parser.add_argument("--json", type=pathlib.Path, help="keep the figures in this JSON file")
    parser.add_argument("--from-json", type=pathlib.Path, nargs="+",
                        help="redraw --png from --json files (their sizes together); run nothing")
    args = parser.parse_args()
    if args.from_json:
        if not args.png:
            parser.error("--from-json needs --png")
        kept = [json.loads(path.read_text()) for path in args.from_json]
        sizes = {int(k): v for one in kept for k, v in one["sizes"].items()}
        draw(dict(sorted(sizes.items())), args.png, kept[-1]["title"])
        return 0
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engines {sorted(unknown)}; valid: {', '.join(ENGINES)}")
    try:
        sizes = [int(s) for s in args.sizes_mib.split(",") if s]
    except ValueError:
        parser.error(f"--sizes-mib takes whole MiB separated by commas, not {args.sizes_mib!r}")
    if not sizes or min(sizes) < 1 or args.files < 1 or args.rounds < 1 or args.workers < 1 or args.max_gib < 1:
        parser.error("sizes, --files, --max-gib, --rounds and --workers must be at least 1")
    if not 0 < args.memory_share <= 1:
        parser.error("--memory-share must be in (0, 1]")

    work = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-wordcount-"))
    postgres = PostgresServer(durable=True).start() if any(engine_view.engine(e).database for e in engines) else None
    title = (f"wordcount, 2 backends, local COMPSs runtime (workers per size below); "
             f"{os.cpu_count()} CPUs, {available_bytes() / (1 << 30):.0f} GiB available at start")
    figures: dict[int, dict] = {}
    failed: dict[tuple[int, str], str] = {}
    try:
        print(title, flush=True)
        for size_mib in sizes:
            # as many workers as asked, or fewer where their word_count calls leave no room for the texts
            workers = next((w for w in range(args.workers, 0, -1)
                            if files_that_fit(size_mib << 20, args.memory_share, w)), 1)
            fit = files_that_fit(size_mib << 20, args.memory_share, workers)
            files = min(args.files, fit, (args.max_gib << 10) // size_mib)
            print(f"files of {size_mib} MiB: {fit} fit in {args.memory_share:.0%} of the memory available with "
                  f"{workers} worker(s); running {files}", flush=True)
            if files == 0:
                continue
            texts = work / f"texts-{size_mib}"
            texts.mkdir()
            write_texts(texts, files, size_mib << 20, work / "chunks")
            runs: dict[str, list[dict]] = {}
            started = time.strftime("%H:%M")
            for _ in range(args.rounds):
                if not args.no_plain:
                    runs.setdefault(PLAIN, []).append(run_plain(texts))
                for engine in engines:
                    try:
                        runs.setdefault(engine, []).append(
                            run_engine(engine, texts, files, size_mib, workers, postgres))
                    except RuntimeError as e:  # the other engines still run; the figure says which failed
                        failed[(size_mib, engine)] = str(e)
                        print(f"  {engine} failed: {str(e)[-2000:]}", flush=True)
            shutil.rmtree(texts)
            tops = {r["top"] for rs in runs.values() for r in rs}
            assert len(tops) <= 1, f"runs disagree on the top words: {tops}"
            figures[size_mib] = {"files": files, "workers": workers, "from": started, "to": time.strftime("%H:%M"),
                                 "runs": {name: summary(rs) for name, rs in runs.items() if rs}}
            print_size(size_mib, files, workers, figures[size_mib]["runs"])
            print(f"  {started}-{figures[size_mib]['to']}, load average {os.getloadavg()[0]:.1f}", flush=True)
            if args.json:
                args.json.write_text(json.dumps({"title": title, "sizes": figures}, indent=1))
    finally:
        if postgres:
            postgres.stop()
        shutil.rmtree(work, ignore_errors=True)
    if args.png and figures:
        draw(figures, args.png, title)
        print(f"figure: {args.png}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
