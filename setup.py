"""Installs pyclay: the Python package `dataclay` (client, execution environment, CLI) and
`storage` (the COMPSs storage interface). Run `make build` first: it generates the protocol
modules from proto/ and places the Java server jars the `dataclay` command launches."""
from setuptools import find_packages, setup

setup(
    name="pyclay",
    version="0.1.0",
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
