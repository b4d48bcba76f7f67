"""Confinement of execution environments: the launcher a Data Service runs to start one
(`python -m dataclay._internal.sandbox`, launcher.py) and the layers the confined process applies to
itself (`confine`, confinement.py). Standard library and ctypes only, and no import of the rest of
dataclay: it runs before anything else in a fresh interpreter, and must start fast."""
from .confinement import confine, confine_from_environment
from .profiles import Limits, Profile, SandboxError

__all__ = ["Limits", "Profile", "SandboxError", "confine", "confine_from_environment"]
