"""Python models written by the integration tests themselves, and clients that use them."""
from __future__ import annotations

import json
import pathlib
import textwrap


def write_model(root: pathlib.Path, package: str, source: str, module: str = "model") -> pathlib.Path:
    """`root` holding package `package` whose `module`.py is `source` (what NewModel registers); `root`."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / f"{module}.py").write_text(source)
    return root


def one_field_model(cls: str, field: str, field_type: str, method: str, returns: str, result: str) -> str:
    """Source of a model module with one class `cls`: one field, set by its constructor, and one
    active method `method` (declared to return `returns`) returning the expression `result`."""
    return textwrap.dedent(f"""
        from dataclay import DataClayObject, activemethod

        class {cls}(DataClayObject):
            {field}: {field_type}

            def __init__(self, {field}):
                self.{field} = {field}

            @activemethod
            def {method}(self) -> {returns}:
                return {result}
    """)


def run_with_model(cluster, root: pathlib.Path, imports: str, body: str) -> dict:
    """Runs a client of `cluster` with `root` (a model written by write_model) on its path: `imports`,
    then api.init(), then `body`; the JSON its last line printed."""
    code = (f"import sys; sys.path.insert(0, {str(root)!r})\n" + textwrap.dedent(imports)
            + "from dataclay import api\napi.init()\n" + textwrap.dedent(body))
    out = cluster.run_client(code)
    return json.loads(out.stdout.strip().splitlines()[-1])
