package io.dataclay.logic.outgoing;

import io.dataclay.common.Language;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.Empty;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.RemoveModelsRequest;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.testing.LogicModuleFixture;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;


/** Registered models reach live backends through a real DataService gRPC peer. */
@Timeout(60)
class ModelDeploymentTest {
  /** What one DeployModels call carried. */
  private record Delivery(List<Model> models, String token) {}

  /** The receiving peer: a real gRPC server that implements DataService.DeployModels and RemoveModels. */
  private static final class DeployRecorder extends DataServiceGrpc.DataServiceImplBase {
    final BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
    final BlockingQueue<RemoveModelsRequest> removed = new LinkedBlockingQueue<>();
    volatile long installMs;

    @Override
    public void removeModels(RemoveModelsRequest request, StreamObserver<Empty> out) {
      removed.add(request);
      out.onNext(Empty.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void deployModels(ModelList request, StreamObserver<Empty> out) {
      sleep(installMs); // installing: writing files, handing them to the execution environments
      received.add(new Delivery(request.getModelsList(), SessionMetadata.currentToken()));
      out.onNext(Empty.getDefaultInstance());
      out.onCompleted();
    }
  }

  @TempDir
  Path dir;
  private LogicModuleFixture lm;
  private DeployRecorder recorder;
  private Server peer;
  private String alice;

  @BeforeEach
  void start() throws Exception {
    lm = new LogicModuleFixture("jdbc:sqlite:" + dir.resolve("metadata.db"));
    recorder = new DeployRecorder();
    peer = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
        .addService(ServerInterceptors.intercept(recorder, SessionMetadata.serverInterceptor())).build().start();
    alice = lm.modeler("alice");
  }

  @AfterEach
  void stop() throws Exception {
    lm.close();
    peer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private static ModelRecord model(String content) {
    return new ModelRecord("shop", Language.PYTHON, "", 0,
        List.of(new ModelRecord.File("shop/models.py", content.getBytes())),
        List.of(new ModelRecord.ClassInfo("shop.models.Item", List.of(), List.of())));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void a_registered_model_is_deployed_to_a_live_backend_with_the_system_session() throws Exception {
    // setup
    lm.backend(peer.getPort());
    // run
    lm.service.registerModel(alice, model("class Item: pass"));
    // verify
    Delivery d = recorder.received.poll(20, TimeUnit.SECONDS);
    assertNotNull(d, "the backend received no DeployModels");
    assertEquals(1, d.models().size());
    Model m = d.models().get(0);
    assertEquals("shop", m.getNamespace());
    assertEquals(1, m.getVersion());
    assertEquals("alice", m.getOwner());
    assertEquals("class Item: pass", m.getFiles(0).getContent().toStringUtf8());
    CallerSession caller = lm.service.validateSession(lm.backendToken, d.token());
    assertEquals(AccountService.SYSTEM_ACCOUNT, caller.username());
    assertTrue(caller.backend());
  }

  @Test
  void registration_returns_only_once_every_live_backend_has_installed_the_model() throws Exception {
    // setup: a backend that takes a while to install
    recorder.installMs = 700;
    lm.backend(peer.getPort());
    // run
    lm.service.registerModel(alice, model("class Item: pass"));
    // verify: no waiting here; the backend confirmed before the call returned
    Delivery d = recorder.received.poll();
    assertNotNull(d, "registerModel returned before the backend had installed the model");
    assertEquals("shop", d.models().get(0).getNamespace());
  }

  @Test
  void a_backend_receives_successive_versions_in_registration_order() throws Exception {
    // setup
    lm.backend(peer.getPort());
    // run
    for (int v = 1; v <= 5; v++) {
      lm.service.registerModel(alice, model("version " + v));
    }
    // verify
    for (int v = 1; v <= 5; v++) {
      Delivery d = recorder.received.poll(20, TimeUnit.SECONDS);
      assertNotNull(d, "missing version " + v);
      assertEquals(v, d.models().get(0).getVersion());
    }
  }

  @Test
  void a_backend_that_is_down_does_not_fail_the_registration_nor_delay_the_others() throws Exception {
    // setup
    lm.backend(closedPort());
    lm.backend(peer.getPort());
    // run
    ModelRecord stored = lm.service.registerModel(alice, model("x = 1"));
    // verify
    assertEquals(1, stored.version());
    Delivery d = recorder.received.poll(20, TimeUnit.SECONDS);
    assertNotNull(d, "the live backend received nothing");
    assertEquals("shop", d.models().get(0).getNamespace());
  }

  @Test
  void a_backend_past_its_liveness_window_is_not_called() throws Exception {
    // setup
    lm.backend(peer.getPort());
    lm.clock.advance(Duration.ofMillis(LogicModuleFixture.BACKEND_TIMEOUT_MS + 1));
    // run
    lm.service.registerModel(alice, model("y = 2"));
    // verify
    assertNull(recorder.received.poll(1, TimeUnit.SECONDS));
  }

  @Test
  void publication_withdrawal_restoration_and_removal_reach_a_live_backend_in_increasing_revisions()
      throws Exception {
    // setup
    lm.backend(peer.getPort());
    lm.service.registerModel(alice, model("class Item: pass"));
    Delivery registered = recorder.received.poll(20, TimeUnit.SECONDS);
    // run
    lm.service.setModelPublished(alice, "shop", true);
    lm.service.setModelRegistration(lm.adminToken, "alice", false);
    lm.service.setModelRegistration(lm.adminToken, "alice", true);
    lm.service.removeModel(alice, "shop", false);
    // verify: each change as the backend must apply it; the withdrawal carries no code
    Model published = recorder.received.poll(20, TimeUnit.SECONDS).models().get(0);
    Model withdrawn = recorder.received.poll(20, TimeUnit.SECONDS).models().get(0);
    Model restored = recorder.received.poll(20, TimeUnit.SECONDS).models().get(0);
    RemoveModelsRequest removal = recorder.removed.poll(20, TimeUnit.SECONDS);
    assertNotNull(registered);
    assertTrue(published.getPublished() && !published.getWithdrawn());
    assertTrue(withdrawn.getWithdrawn());
    assertEquals(0, withdrawn.getFilesCount());
    assertTrue(!restored.getWithdrawn() && restored.getFilesCount() == 1);
    assertNotNull(removal, "the backend was not told of the removal");
    assertEquals(List.of("shop"), removal.getNamespacesList());
    long first = registered.models().get(0).getRevision();
    assertTrue(first < published.getRevision() && published.getRevision() < withdrawn.getRevision()
        && withdrawn.getRevision() < restored.getRevision() && restored.getRevision() < removal.getRevision(),
        List.of(first, published.getRevision(), withdrawn.getRevision(), restored.getRevision(),
            removal.getRevision()).toString());
  }
}
