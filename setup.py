"""Installs pyclay: the Python package `dataclay` (client, execution environment, CLI) and
`storage` (the COMPSs storage interface). Run `make build` first: it generates the protocol
modules from proto/ and places the Java server jars the `dataclay` command launches."""
import re
from pathlib import Path

from setuptools import find_packages, setup

_VERSION = Path(__file__).with_name("pyclay") / "dataclay" / "_internal" / "version.py"
_FIELDS = dict(re.findall(r'^(DISTRIBUTION|VERSION) = "([^"]+)"$', _VERSION.read_text(), re.M))

setup(
    name=_FIELDS["DISTRIBUTION"],
    version=_FIELDS["VERSION"],
    description="Python client and execution environment of a dataClay-style persistent-memory object store",
    package_dir={"": "pyclay"},
    packages=find_packages("pyclay", exclude=["tests", "tests.*"]),
    package_data={"dataclay._internal": ["jars/*.jar", "proto/*.pyi"]},
    python_requires=">=3.10",
    install_requires=open("requirements.txt").read().split(),
    entry_points={
        "console_scripts": [
            "dataclay=dataclay._internal.cli.cluster:main",
            "dataclaycmd=dataclay._internal.cli.dataclaycmd:main",
        ]
    },
)
