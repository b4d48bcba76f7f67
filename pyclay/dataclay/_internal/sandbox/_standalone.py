"""Loads this package under a private name without importing `dataclay`, whose __init__ imports grpc
(~200 ms): how the launcher and the exec wrapper run when started as `python -I [-S] <this directory>`
or `python -I -S <this directory>/exec.py`. Only the standard library is imported."""
import importlib
import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

NAME = "dataclay_sandbox"


def load(submodule: str = ""):
    """The package (or one of its modules), loaded once as `dataclay_sandbox`."""
    here = os.path.dirname(os.path.abspath(__file__))
    # the caller put this directory on sys.path to import this module; left there, the package's
    # modules would shadow the standard library's for everything imported later
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    if NAME not in sys.modules:  # what importlib.util would do, without its 3 ms of imports
        init = os.path.join(here, "__init__.py")
        loader = SourceFileLoader(NAME, init)
        package = type(sys)(NAME)
        package.__spec__ = ModuleSpec(NAME, loader, origin=init, is_package=True)
        package.__spec__.submodule_search_locations = package.__path__ = [here]
        package.__spec__.has_location = True
        package.__file__, package.__loader__, package.__package__ = init, loader, NAME
        sys.modules[NAME] = package
        loader.exec_module(package)
    return importlib.import_module(f"{NAME}.{submodule}" if submodule else NAME)
