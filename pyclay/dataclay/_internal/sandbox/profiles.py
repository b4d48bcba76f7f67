"""The sandbox profile: what the launcher decided and the confined process applies to itself.
It travels as JSON in DATACLAY_SANDBOX (nothing in it is secret) and is checked on both sides."""
from __future__ import annotations

import json
import os
from collections import namedtuple

ENV_PROFILE = "DATACLAY_SANDBOX"
ENV_APPLIED = "DATACLAY_SANDBOX_APPLIED"
MODES = ("bwrap", "kernel", "none")
NPROC_SCOPES = ("sandbox", "user")
FORMAT = 1
MAX_ID = 2**32 - 2  # (uid_t)-1 means "unchanged" to the set*id calls

# name: (smallest value, largest value); 0 (no limit) is always allowed
LIMIT_RANGES = {
    "memory_mb": (16, 1 << 24),
    "max_processes": (1, 1 << 22),
    "open_files": (16, 1 << 20),
    "cpu_seconds": (1, 1 << 31),
    "file_mb": (1, 1 << 24),
}


class SandboxError(Exception):
    """A sandbox that cannot be set up as asked; the message says what is wrong or missing."""


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Limits(namedtuple("Limits", "memory_mb max_processes nproc_scope open_files cpu_seconds file_mb",
                        defaults=(0, 0, "sandbox", 0, 0, 0))):
    """Resource bounds of the confined process tree; 0 means none. nproc_scope "sandbox": RLIMIT_NPROC
    counts only this sandbox's tasks (its own user namespace or uid); "user": the user is shared with
    the Data Service, so the bound is that user's tasks at start plus max_processes (limits.py)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls, *args, **kwargs)
        for name, (low, high) in LIMIT_RANGES.items():
            value = getattr(self, name)
            if not _is_int(value) or not (low <= value <= high or value == 0):
                raise SandboxError(f"limit {name} must be 0 (none) or an integer from {low} to {high}, got {value!r}")
        if self.nproc_scope not in NPROC_SCOPES:
            raise SandboxError(f"nproc_scope must be one of {NPROC_SCOPES}, got {self.nproc_scope!r}")
        return self


class Profile(namedtuple("Profile", "mode read write limits uid gid parent_pid keep_in_group",
                         defaults=((), (), Limits(), None, None, None, False))):
    """What to apply inside: the paths the process may read (and execute) and write, its limits,
    the user to become (None: keep), the parent it must die with (None: bwrap sees to it), and
    whether its children must stay in its process group."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls, *args, **kwargs)
        if self.mode not in MODES:
            raise SandboxError(f"mode must be one of {MODES}, got {self.mode!r}")
        for name in ("read", "write"):
            if not isinstance(getattr(self, name), tuple):
                raise SandboxError(f"{name} must be a tuple of paths")
            for path in getattr(self, name):
                if not isinstance(path, str) or not os.path.isabs(path) or os.path.normpath(path) != path \
                        or "\0" in path:
                    raise SandboxError(f"{name} paths must be absolute and normalised, got {path!r}")
        if not isinstance(self.limits, Limits):
            raise SandboxError("limits must be a Limits")
        if (self.uid is None) != (self.gid is None):
            raise SandboxError("uid and gid are given together or not at all")
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if value is not None and (not _is_int(value) or not 1 <= value <= MAX_ID):
                raise SandboxError(f"{name} must be an integer from 1 to {MAX_ID}, got {value!r}")
        if self.parent_pid is not None and (not _is_int(self.parent_pid) or self.parent_pid < 1):
            raise SandboxError(f"parent_pid must be a positive integer, got {self.parent_pid!r}")
        if not isinstance(self.keep_in_group, bool):
            raise SandboxError("keep_in_group must be true or false")
        return self

    def to_json(self) -> str:
        """The profile as one line of JSON, for DATACLAY_SANDBOX."""
        return json.dumps({"format": FORMAT, **self._asdict(), "limits": self.limits._asdict()}, separators=(",", ":"))

    @staticmethod
    def from_json(text: str) -> Profile:
        """Parses and checks a profile written by to_json; SandboxError says what is wrong."""
        try:
            data = json.loads(text)
        except ValueError as e:
            raise SandboxError(f"{ENV_PROFILE} is not valid JSON: {e}") from None
        if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
            raise SandboxError(f"{ENV_PROFILE} is not a format-{FORMAT} sandbox profile")
        limits = data.pop("limits", {})
        if not isinstance(limits, dict):
            raise SandboxError("limits must be an object")
        for name in ("read", "write"):
            if not isinstance(data.get(name, []), list):
                raise SandboxError(f"{name} must be a list of paths")
            data[name] = tuple(data.get(name, []))
        try:
            return Profile(limits=Limits(**limits), **data)
        except TypeError as e:
            raise SandboxError(f"{ENV_PROFILE} has an unknown or missing field: {e}") from None
