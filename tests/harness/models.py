"""Python models written by the integration tests themselves, and clients that use them."""
from __future__ import annotations

import json
import pathlib
import textwrap


def write_model(root: pathlib.Path, package: str, source: str) -> pathlib.Path:
    """`root` holding package `package` whose model.py is `source` (what NewModel registers); `root`."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "model.py").write_text(source)
    return root


def run_with_model(cluster, root: pathlib.Path, imports: str, body: str) -> dict:
    """Runs a client of `cluster` with `root` (a model written by write_model) on its path: `imports`,
    then api.init(), then `body`; the JSON its last line printed."""
    code = (f"import sys; sys.path.insert(0, {str(root)!r})\n" + textwrap.dedent(imports)
            + "from dataclay import api\napi.init()\n" + textwrap.dedent(body))
    out = cluster.run_client(code)
    return json.loads(out.stdout.strip().splitlines()[-1])
