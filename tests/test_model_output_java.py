"""What a Java model prints (System.out, System.err) reaches its backend's log as a Python model's
output does: each line led by the account (as the Data Service knows it) and the call, escaped."""
import json
import pathlib
import shutil
import subprocess
import textwrap
import time

import pytest

from conftest import started_cluster

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE_POM = ROOT / "examples" / "java-wordcount" / "pom.xml"
USER, PASSWORD = "jo", "jo-password-12345"

MODEL = textwrap.dedent("""
    package chattyj;

    import io.dataclay.api.DataClayObject;

    public class Chatty extends DataClayObject {
      private int said;

      public Chatty() {}

      public int say(String text) {
        System.out.println("printed " + text);
        System.err.println("to stderr " + text);
        said++;
        return said;
      }
    }
""")

CLIENT = textwrap.dedent("""
    import chattyj.Chatty;
    import io.dataclay.api.DataClay;

    public final class ChattyClient {
      public static void main(String[] args) {
        DataClay.init();
        try {
          Chatty c = new Chatty();
          c.makePersistent();
          int said = c.say(args[0]);
          System.out.println("{\\"id\\": \\"" + c.getID() + "\\", \\"said\\": " + said + "}");
        } finally {
          DataClay.finish();
        }
      }
    }
""")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The model built and enhanced like the Java example, and the client compiled against it."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the Java integration tests need mvn and javac on PATH")
    project = tmp_path_factory.mktemp("chatty-java-model")
    (project / "pom.xml").write_text(EXAMPLE_POM.read_text().replace("java-wordcount", "chatty-java"))
    source = project / "src" / "main" / "java" / "chattyj" / "Chatty.java"
    source.parent.mkdir(parents=True)
    source.write_text(MODEL)
    subprocess.run(["mvn", "-q", "-B", "-o", "-f", str(project / "pom.xml"), "package"], check=True, timeout=600)
    out = tmp_path_factory.mktemp("chatty-java-client")
    (out / "ChattyClient.java").write_text(CLIENT)
    classpath = f"{project / 'target' / 'classes'}:{project / 'target' / 'lib'}/*"
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(out / "ChattyClient.java")], check=True,
                   timeout=120)
    return project / "target" / "classes", f"{out}:{classpath}"


def test_java_model_output_reaches_the_backend_log_with_account_and_call(built, tmp_path):
    classes, classpath = built
    cluster = started_cluster(backends=1)
    try:
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "chattyj", str(classes), "java")
        cluster.dataclaycmd("NewAccount", USER, PASSWORD)
        env = dict(cluster.env, DATACLAY_USER=USER, DATACLAY_PASSWORD=PASSWORD)
        # run: jo's call prints a line with a forged line and an escape sequence in it
        result = subprocess.run(["java", "-cp", classpath, "ChattyClient", "hi\nforged line\u001b[2J"], env=env,
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{cluster.logs()}"
        made = json.loads(result.stdout.strip().splitlines()[-1])
        deadline = time.monotonic() + 20
        log = ""
        while "to stderr hi" not in log and time.monotonic() < deadline:
            log = (cluster.home / "logs" / "backend-1.log").read_text(errors="replace")
            time.sleep(0.2)
    finally:
        cluster.stop()
    # verify: every line of the call names jo and the call; the forged line is one of them, escaped
    call = f"call chattyj.Chatty.say on {made['id']}: "
    lines = [line for line in log.splitlines() if "hi" in line or "forged line" in line]
    assert made["said"] == 1
    assert any(line.endswith(call + "stdout: printed hi") for line in lines), log[-3000:]
    assert any(line.endswith(call + "stderr: to stderr hi") for line in lines), lines
    assert any(line.endswith(call + "stdout: forged line\\x1b[2J") for line in lines), lines
    assert all(" java-ee jo (pid " in line for line in lines if call in line), lines
    assert "\x1b" not in log
    # and the environment's own log records stay one line each, not labelled as model output
    deployed = [line for line in log.splitlines() if "deployed Java model chattyj" in line]
    assert deployed and all("java-ee jo (pid " in line and "stderr:" not in line for line in deployed), deployed
