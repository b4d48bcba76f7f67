package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.RealPython;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.EnvironmentProcess;
import io.dataclay.proto.ExecutionEnvironmentStatus;
import io.dataclay.proto.Field;
import io.dataclay.proto.Language;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectHeader;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real Python execution environment, confined as DATACLAY_EE_CONFINEMENT=auto says, running a
 * model method end to end (skipped when no interpreter with pyclay is built).
 */
@Timeout(90)
class ConfinedPythonEnvironmentTest {
  private static final String TALLY = String.join("\n",
      "from dataclay import DataClayObject, activemethod",
      "",
      "",
      "class Tally(DataClayObject):",
      "    n: int",
      "",
      "    @activemethod",
      "    def add(self, k: int) -> int:",
      "        self.n = self.n + k",
      "        return self.n",
      "");

  @RegisterExtension final TestCluster cluster = TestCluster.forEachTest();

  /** A pickle (protocol 2) of a small int, as Python writes it: PROTO 2, BININT1 n, STOP. */
  private static byte[] pickledInt(int n) {
    return new byte[] {(byte) 0x80, 2, 'K', (byte) n, '.'};
  }

  /** A pickle of ((n,), {}): a call's arguments. */
  private static byte[] pickledArgs(int n) {
    return new byte[] {(byte) 0x80, 2, 'K', (byte) n, (byte) 0x85, '}', (byte) 0x86, '.'};
  }

  /** The small int a pickle of any protocol holds (its BININT1 operand, just before STOP). */
  private static int unpickledInt(byte[] pickle) {
    assertEquals('.', pickle[pickle.length - 1]);
    assertEquals('K', pickle[pickle.length - 3]);
    return pickle[pickle.length - 2] & 0xff;
  }

  @Test
  void a_model_method_runs_in_a_confined_process_of_its_caller_and_its_change_is_stored() throws Exception {
    // setup
    Optional<Path> python = RealPython.find();
    assumeTrue(python.isPresent(), RealPython.missing());
    cluster.registerModel(Model.newBuilder().setNamespace("tally").setLanguage(Language.PYTHON)
        .addFiles(ModelFile.newBuilder().setPath("tally.py").setContent(TestObjects.bytes(TALLY)))
        .addClasses(ClassDescription.newBuilder().setName("tally.Tally")).build());
    cluster.startDataService(Map.of("DATACLAY_PYTHON", python.get().toString(),
        EnvironmentSettings.CONFINEMENT, "auto", "DATACLAY_EE_WAIT_MS", "60000"));
    DataServiceClient tess = cluster.client(cluster.session("tess"));
    UUID id = UUID.randomUUID();
    tess.makePersistent(List.of(ObjectData.newBuilder().setId(id.toString())
        .setHeader(ObjectHeader.newBuilder().setClassName("tally.Tally").setLanguage(Language.PYTHON))
        .addFields(Field.newBuilder().setName("n").setValue(ByteString.copyFrom(pickledInt(5)))).build()), null);
    // run
    byte[] result = tess.callMethod(id.toString(), "add", pickledArgs(7));
    byte[] again = tess.callMethod(id.toString(), "add", pickledArgs(1));
    // verify: the value, the stored state, and the process that ran it
    assertEquals(12, unpickledInt(result));
    assertEquals(13, unpickledInt(again));
    assertEquals(13, unpickledInt(cluster.store().get(id).orElseThrow().fields().get("n").value()));
    ExecutionEnvironmentStatus env = cluster.client(cluster.adminToken()).getStatus(5000).getEnvironmentsList()
        .stream().filter(e -> e.getLanguage() == Language.PYTHON).findFirst().orElseThrow();
    assertEquals("auto", env.getConfinement());
    EnvironmentProcess process = env.getProcessesList().stream().filter(p -> p.getAccount().equals("tess"))
        .findFirst().orElseThrow();
    assertTrue(process.getAlive());
    assertTrue(process.getPid() > 0);
    assertFalse(process.getConfinement().isEmpty(), "the process said nothing of its confinement");
    assertEquals(2, process.getCalls());
    assertEquals(0, process.getRestarts());
  }
}
