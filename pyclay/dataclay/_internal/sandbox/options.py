"""The launcher's command line: `[options] -- COMMAND [ARGS...]`, each option checked for its own
range (argparse exits with status 2 and says which)."""
from __future__ import annotations

import argparse
from collections import namedtuple

from .profiles import LIMIT_RANGES

# Slot uids stay in systemd's unassigned 1879048192-2147352575 (above container ranges, below the
# "foreign" range and 2^31, where signed-int bugs live); also above useradd's subordinate-id ranges.
UID_WINDOW = (1_879_048_192, 2_147_352_575)


class Request(namedtuple("Request", "mode read memory_mb max_processes max_open_files cpu_seconds tmp_mb "
                                    "uid_slot tmp self_confining command")):
    """The launcher's options, each checked for its own range."""

    __slots__ = ()


def parser() -> argparse.ArgumentParser:
    """The launcher's options."""
    p = argparse.ArgumentParser(prog="python -m dataclay._internal.sandbox",
                                usage="%(prog)s [options] -- COMMAND [ARGS...]",
                                description="Starts COMMAND confined (see docs/internals.md, Confinement of "
                                            "execution environments).")
    p.add_argument("--mode", choices=("auto", "bwrap", "kernel", "none"), default="auto",
                   help="bwrap: namespaces + kernel layers; kernel: Landlock, seccomp, rlimits only; none: "
                        "rlimits and a process group only (unconfined); auto: bwrap, else kernel, else refuse")
    p.add_argument("--read", action="append", default=[], metavar="PATH",
                   help="another path to expose read-only (repeatable)")
    p.add_argument("--memory-mb", type=_bounded("memory_mb"), default=0, help="RLIMIT_AS (0: none)")
    p.add_argument("--max-processes", type=_bounded("max_processes", zero=False), default=256,
                   help="processes and threads of the whole sandbox (256)")
    p.add_argument("--max-open-files", type=_bounded("open_files", zero=False), default=1024,
                   help="RLIMIT_NOFILE (1024)")
    p.add_argument("--cpu-seconds", type=_bounded("cpu_seconds"), default=0, help="RLIMIT_CPU (0: none)")
    p.add_argument("--tmp-mb", type=_bounded("file_mb", zero=False), default=256,
                   help="size of the private /tmp (bwrap); largest file in --tmp (kernel, none) (256)")
    p.add_argument("--uid-slot", type=_bounded_int(0, UID_WINDOW[1] - UID_WINDOW[0]), default=None, metavar="N",
                   help="as root: run as uid/gid DATACLAY_EE_UID_BASE + N (required as root, except in none mode)")
    p.add_argument("--tmp", metavar="DIR", help="kernel and none modes: the private 0700 directory that is the "
                                                "only writable place (ignored in bwrap mode: /tmp is private)")
    p.add_argument("--self-confining", action="store_true",
                   help="COMMAND calls confine_from_environment() itself, first thing")
    return p


def parse(argv: list[str]) -> Request:
    """Parses the command line; argparse exits with status 2 on a bad option."""
    p = parser()
    if "--" not in argv:
        p.error("give the command to confine after --")
    split = argv.index("--")
    parsed, command = p.parse_args(argv[:split]), argv[split + 1:]
    if not command:
        p.error("give the command to confine after --")
    return Request(parsed.mode, tuple(parsed.read), parsed.memory_mb, parsed.max_processes,
                   parsed.max_open_files, parsed.cpu_seconds, parsed.tmp_mb, parsed.uid_slot, parsed.tmp,
                   parsed.self_confining, tuple(command))


def _bounded(limit: str, zero: bool = True):
    low, high = LIMIT_RANGES[limit]
    return _bounded_int(low, high, zero)


def _bounded_int(low: int, high: int, zero: bool = False):
    def parse_int(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not (low <= value <= high or (zero and value == 0)):
            raise argparse.ArgumentTypeError(f"give {'0 (none) or ' if zero else ''}an integer from {low} to {high}, "
                                             f"not {text!r}")
        return value
    return parse_int
