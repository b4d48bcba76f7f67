"""Where dataClay 4 puts contributed models (`dataclay.contrib.modeltest`, ...): a model package
`dataclay.contrib.<name>` may live in any directory on sys.path that holds `dataclay/contrib/<name>/`,
so dataClay 4 programs and their models import unchanged. Nothing of dataClay itself is here, and
nothing else under `dataclay` can come from elsewhere."""
import os
import sys


def rescan() -> None:
    """Adds the `dataclay/contrib` directory of each sys.path entry that has one (after a model was
    deployed into one, say) to where this package's modules are searched, after this one."""
    for entry in sys.path:
        where = os.path.abspath(os.path.join(entry or os.curdir, "dataclay", "contrib"))
        if where not in __path__ and os.path.isdir(where) and os.path.realpath(where) not in map(
                os.path.realpath, __path__):
            __path__.append(where)


rescan()
