"""The distribution's name and version, in one place: setup.py, `--version` and the wheel read them.

The distribution is `pmclay`; the package it installs is `dataclay`, so that dataClay 2 and 4
programs import it unchanged. It therefore replaces, and cannot sit beside, dataClay 4's
`dataclay` distribution in one environment."""

DISTRIBUTION = "pmclay"
VERSION = "0.1.0"
"""The same as the Maven projects' version (pom.xml), which the servers report: one release, one number."""
