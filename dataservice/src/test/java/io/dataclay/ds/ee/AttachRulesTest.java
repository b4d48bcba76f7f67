package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectData;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class AttachRulesTest {
  @TempDir static Path tmp;
  static TestCluster cluster;

  @BeforeAll
  static void startLogicModule() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
  }

  @AfterAll
  static void stopLogicModule() throws Exception {
    cluster.close();
  }

  @AfterEach
  void stopDataService() throws Exception {
    cluster.stopDataService();
  }

  @Test
  void a_wrong_or_missing_secret_is_unauthenticated() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    cluster.secret(null);
    // run
    EnvironmentPeer wrong = cluster.closing(EnvironmentPeer.attach(cluster.port(), "not-the-secret"));
    EnvironmentPeer none = cluster.closing(EnvironmentPeer.attach(cluster.port(), null));
    // verify
    assertEquals(Status.Code.UNAUTHENTICATED, wrong.closedStatus().getCode());
    assertEquals(Status.Code.UNAUTHENTICATED, none.closedStatus().getCode());
    assertFalse(cluster.pythonAlive());
  }

  @Test
  void a_second_stream_is_refused_while_one_is_attached() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    EnvironmentPeer first = cluster.attachPeer();
    // run
    EnvironmentPeer second = cluster.closing(EnvironmentPeer.attach(cluster.port(), cluster.secret(null)));
    // verify: refused, and the first still serves
    assertEquals(Status.Code.PERMISSION_DENIED, second.closedStatus().getCode());
    DataServiceClient user = cluster.client(cluster.session("kim"));
    UUID id = UUID.randomUUID();
    user.makePersistent(List.of(point(id, "0")), null);
    Thread served = new Thread(() -> {
      try {
        var req = first.nextExecute();
        first.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(TestObjects.bytes("1")).build());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    served.start();
    assertEquals("1", new String(user.callMethod(id.toString(), "m", new byte[0])));
    served.join(10_000);
  }

  @Test
  void a_stream_that_does_not_open_with_hello_is_refused_and_its_process_replaced() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    String secret = cluster.secret(null);
    EnvironmentPeer rude = cluster.closing(EnvironmentPeer.connect(cluster.port(), secret));
    // run
    rude.send(EnvironmentMessage.newBuilder().setResult(ExecuteResult.newBuilder().setCallId(1)).build());
    // verify
    Status status = rude.closedStatus();
    assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode());
    assertTrue(status.getDescription().contains("hello"), status.getDescription());
    cluster.attachPeer(secret);
    assertEquals(1, cluster.node().report().environments().get(0).restarts());
  }

  @Test
  void objects_of_a_language_without_environment_are_unavailable() throws Exception {
    // setup: a Java class registered, but this backend runs only the Python environment
    cluster.registerModel(io.dataclay.proto.Model.newBuilder().setNamespace("jmodels").setLanguage(Language.JAVA)
        .addFiles(io.dataclay.proto.ModelFile.newBuilder().setPath("org/example/Person.class")
            .setContent(TestObjects.bytes("\u00ca\u00fe")))
        .addClasses(io.dataclay.proto.ClassDescription.newBuilder().setName("org.example.Person")).build());
    cluster.startDataService(Map.of());
    DataServiceClient user = cluster.client(cluster.session("max"));
    UUID id = UUID.randomUUID();
    ObjectData person = TestObjects.object(id, "org.example.Person", Language.JAVA, "name", "Ada");
    user.makePersistent(List.of(person), null);
    // run
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> user.callMethod(id.toString(), "greet", new byte[0]));
    // verify
    assertTrue(e.getMessage().contains("JAVA"), e.getMessage());
  }
}
