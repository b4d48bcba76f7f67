"""Java models for the integration tests: a model's source built and enhanced like the Java example
(examples/java-wordcount), and a client compiled against it."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from harness.cluster import REPO

EXAMPLE_POM = REPO / "examples" / "java-wordcount" / "pom.xml"


def build_java_model(tmp_path_factory, name: str, model_class: str, model_source: str, client_class: str,
                     client_source: str) -> tuple[pathlib.Path, str]:
    """Builds `model_source` (class `model_class`, e.g. "chattyj.Chatty") as project `name` and compiles
    `client_source` (class `client_class`, in no package) against it: the model's classes directory
    (what NewModel registers) and the client's classpath."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the Java integration tests need mvn and javac on PATH")
    project = tmp_path_factory.mktemp(f"{name}-model")
    (project / "pom.xml").write_text(EXAMPLE_POM.read_text().replace("java-wordcount", name))
    source = project / "src" / "main" / "java" / (model_class.replace(".", "/") + ".java")
    source.parent.mkdir(parents=True)
    source.write_text(model_source)
    subprocess.run(["mvn", "-q", "-B", "-o", "-f", str(project / "pom.xml"), "package"], check=True, timeout=600)
    out = tmp_path_factory.mktemp(f"{name}-client")
    (out / f"{client_class}.java").write_text(client_source)
    classpath = f"{project / 'target' / 'classes'}:{project / 'target' / 'lib'}/*"
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(out / f"{client_class}.java")], check=True,
                   timeout=120)
    return project / "target" / "classes", f"{out}:{classpath}"


def compile_example_client(tmp_path_factory, client_class: str, client_source: str) -> str:
    """Builds the Java example model (examples/java-wordcount, enhanced) and compiles `client_source`
    (class `client_class`, in no package) against it; returns the client's classpath."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the Java integration tests need mvn and javac on PATH")
    subprocess.run(["mvn", "-q", "-B", "-f", str(EXAMPLE_POM), "package"], check=True, timeout=600)
    out = tmp_path_factory.mktemp("java-client")
    (out / f"{client_class}.java").write_text(client_source)
    classes = EXAMPLE_POM.parent / "target"
    classpath = f"{classes / 'classes'}:{classes / 'lib'}/*"
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(out / f"{client_class}.java")], check=True,
                   timeout=120)
    return f"{out}:{classpath}"


# OpenTelemetry's Java agent, of the release train of the instrumentation library the servers use
# (pom.xml's opentelemetry-instrumentation.version, without -alpha)
OTEL_JAVA_AGENT = "io.opentelemetry.javaagent:opentelemetry-javaagent:2.31.1"


def otel_java_agent(tmp_path_factory) -> pathlib.Path:
    """OpenTelemetry's Java agent from Maven Central, as a Java client's user would download it."""
    out = tmp_path_factory.mktemp("otel-agent")
    subprocess.run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={OTEL_JAVA_AGENT}", f"-DoutputDirectory={out}",
                    "-Dmdep.stripVersion=true"], check=True, timeout=600, cwd=out)
    return out / "opentelemetry-javaagent.jar"
