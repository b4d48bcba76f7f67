"""Generates the Python protocol modules from proto/ into dataclay/_internal/proto.

The .proto files are the single source of truth for both languages; the generated
modules are build output (not committed). protoc names Python imports after the
proto package path ("dataclay.v1"), which would collide with the public `dataclay`
package, so the generated imports are pointed at `dataclay._internal.proto`.
"""
import pathlib
import re
import shutil
import sys
import tempfile

from grpc_tools import protoc


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    proto_root = root / "proto"
    target = root / "pyclay" / "dataclay" / "_internal" / "proto"
    sources = sorted(str(p.relative_to(proto_root)) for p in (proto_root / "dataclay").rglob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        args = ["protoc", f"-I{proto_root}", f"-I{pathlib.Path(protoc.__file__).parent / '_proto'}",
                f"--python_out={tmp}", f"--grpc_python_out={tmp}", f"--pyi_out={tmp}", *sources]
        if protoc.main(args) != 0:
            print("protoc failed", file=sys.stderr)
            return 1
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        (target / "__init__.py").write_text('"""Generated from proto/ by pyclay/generate_protos.py; do not edit."""\n')
        for path in sorted((pathlib.Path(tmp) / "dataclay" / "v1").iterdir()):
            text = re.sub(r"^from dataclay\.v1 import", "from dataclay._internal.proto import",
                          path.read_text(), flags=re.MULTILINE)
            (target / path.name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
