"""What a Java model prints (System.out, System.err) reaches its backend's log as a Python model's
output does: each line led by the account (as the Data Service knows it) and the call, escaped."""
import json
import subprocess
import textwrap

import pytest

from conftest import started_cluster
from harness.java_models import build_java_model

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
    return build_java_model(tmp_path_factory, "chatty-java", "chattyj.Chatty", MODEL, "ChattyClient", CLIENT)


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
        log = cluster.log_containing("backend-1", "to stderr hi")
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
