"""Runs the launcher: `python -m dataclay._internal.sandbox [options] -- COMMAND`, or without importing
the dataclay package (about 200 ms less): `python -I <this directory> [options] -- COMMAND`."""
import os
import sys

if __package__:
    from .launcher import main
else:  # -I leaves this directory off sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _standalone

    main = _standalone.load("launcher").main

if __name__ == "__main__":
    sys.exit(main())
