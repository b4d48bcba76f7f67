"""Installs pmclay: the Python package `dataclay` (client, execution environment, CLI) and `storage`
(the COMPSs storage interface), with the two Java server jars the `dataclay` command launches.

Run `make build` first: it builds the jars, generates the protocol modules from proto/, installs
this tree editable into .venv and writes the wheel to dist/. A wheel built without the jars or the
protocol modules would install a `dataclay start` that cannot start, so the build refuses."""
import re
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "pyclay" / "dataclay"
_FIELDS = dict(re.findall(r'^(DISTRIBUTION|VERSION) = "([^"]+)"$',
                          (PACKAGE / "_internal" / "version.py").read_text(), re.M))
JARS = ("logicmodule.jar", "dataservice.jar")


def _generated_floors() -> dict[str, str]:
    """The oldest protobuf and grpcio the generated protocol modules accept (their gencode checks the
    runtime at import): requirements.txt's floors are those of grpcio-tools, not of the code it made."""
    proto = PACKAGE / "_internal" / "proto"
    floors = {}
    pb2 = proto / "common_pb2.py"
    if pb2.exists():
        found = re.search(r"ValidateProtobufRuntimeVersion\(\s*\S+,\s*(\d+),\s*(\d+),\s*(\d+),", pb2.read_text())
        if found:
            floors["protobuf"] = ".".join(found.groups())
    grpc = proto / "common_pb2_grpc.py"
    if grpc.exists():
        found = re.search(r"^GRPC_GENERATED_VERSION = '([\d.]+)'", grpc.read_text(), re.M)
        if found:
            floors["grpcio"] = found.group(1)
    return floors


def _requirements() -> list[str]:
    floors = _generated_floors()
    out = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", line).group(0)
        out.append(f"{name}>={floors[name]}" if name in floors else line)
    return out


class BuildWithServers(build_py):
    """build_py that refuses to build without the server jars and the generated protocol modules."""

    def run(self):
        missing = [f"dataclay/_internal/jars/{jar}" for jar in JARS
                   if not (PACKAGE / "_internal" / "jars" / jar).is_file()]
        if not (PACKAGE / "_internal" / "proto" / "common_pb2.py").is_file():
            missing.append("dataclay/_internal/proto/*_pb2.py")
        if missing:
            raise SystemExit(f"cannot build pmclay without {', '.join(missing)}: run `make build` "
                             f"(it builds the jars and generates the protocol modules first)")
        super().run()


setup(
    name=_FIELDS["DISTRIBUTION"],
    version=_FIELDS["VERSION"],
    description="dataClay-style persistent-memory object store: Python client, execution environment, "
                "CLI and the Java servers",
    long_description=(PACKAGE / "__init__.py").read_text().split('"""')[1],
    long_description_content_type="text/plain",
    package_dir={"": "pyclay"},
    packages=find_packages("pyclay", include=["dataclay", "dataclay.*", "storage", "storage.*"]),
    # only the jars: their class archives (.jsa) fit one JDK build and are not shipped (see
    # dataclay/_internal/cli/common/class_archives.py)
    package_data={"dataclay": ["py.typed"], "storage": ["py.typed"],
                  "dataclay._internal": ["jars/*.jar", "proto/*.pyi"],
                  "dataclay._internal.cli.dashboard": ["static/*.html", "static/*.js", "static/*.css", "static/vendor/*"]},
    exclude_package_data={"": ["*.jsa", "*.jsa.new", ".new.jar"]},
    python_requires=">=3.10",
    install_requires=_requirements(),
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Java",
        "Operating System :: POSIX :: Linux",
        "Typing :: Typed",
    ],
    cmdclass={"build_py": BuildWithServers},
    entry_points={
        "console_scripts": [
            "dataclay=dataclay._internal.cli.cluster:main",
            "dataclaycmd=dataclay._internal.cli.admin.dataclaycmd:main",
        ]
    },
)
