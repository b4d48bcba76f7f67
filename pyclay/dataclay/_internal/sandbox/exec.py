"""The exec wrapper: applies the in-process layers (DATACLAY_SANDBOX) to itself, then executes
COMMAND, which inherits them all (Landlock, seccomp, no_new_privs, uid, rlimits; not dumpability,
which execve resets). This is how a JVM gets confined; the launcher runs it inside the sandbox as
`python -I -S <this file> -- COMMAND [ARGS...]` (or `python -m dataclay._internal.sandbox.exec -- ...`).
Its description of what was applied is in DATACLAY_SANDBOX_APPLIED for COMMAND to report."""
import os
import sys

if __package__:
    from . import SandboxError, confine_from_environment
    from .profiles import ENV_APPLIED
else:  # -I leaves this directory off sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _standalone

    _package = _standalone.load()
    SandboxError, confine_from_environment = _package.SandboxError, _package.confine_from_environment
    ENV_APPLIED = _standalone.load("profiles").ENV_APPLIED

EXIT_REFUSED = 2


def main(argv: list) -> int:
    """Confines this process and becomes COMMAND; returns only on failure (status 2)."""
    if not argv or argv[0] != "--" or len(argv) < 2:
        print("usage: exec.py -- COMMAND [ARGS...]", file=sys.stderr)
        return EXIT_REFUSED
    command = argv[1:]
    try:
        os.environ[ENV_APPLIED] = confine_from_environment()
    except (SandboxError, OSError) as e:
        print(f"sandbox: cannot confine {command[0]}: {e}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        os.execv(command[0], command)
    except OSError as e:
        print(f"sandbox: cannot execute {command[0]} confined: {e}", file=sys.stderr)
    return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
