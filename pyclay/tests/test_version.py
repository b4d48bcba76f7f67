"""One release, one version number: the Python distribution's and the Java servers'."""
import pathlib
import re

from dataclay._internal.version import VERSION

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_distribution_version_is_the_maven_projects_and_the_servers():
    pom = (REPO / "pom.xml").read_text()
    project = re.search(r"<artifactId>[^<]+</artifactId>\s*<version>([^<]+)</version>", pom).group(1)
    assert VERSION == project
    for source in ["logicmodule/src/main/java/io/dataclay/logic/service/LogicModuleService.java",
                   "dataservice/src/main/java/io/dataclay/ds/ee/java/EnvironmentMain.java"]:
        assert f'{VERSION}"' in (REPO / source).read_text(), source
