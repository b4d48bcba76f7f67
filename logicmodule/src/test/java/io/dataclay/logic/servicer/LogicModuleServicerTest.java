package io.dataclay.logic.servicer;

import com.google.protobuf.ByteString;
import io.dataclay.api.AliasInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.client.NewSession;
import io.dataclay.client.Page;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.LogicModuleServer;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.FieldDescription;
import io.dataclay.proto.Language;
import io.dataclay.proto.LogicModuleStats;
import io.dataclay.proto.MethodDescription;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.RegistrationGroup;
import io.dataclay.server.GrpcServer;
import io.dataclay.testing.LogicModuleFixture;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/** The gRPC surface, through the shared client over an in-process channel. */
@Timeout(60)
class LogicModuleServicerTest {
  @TempDir
  Path dir;
  private LogicModuleFixture lm;
  private GrpcServer server;
  private ManagedChannel channel;
  private LogicModuleClient admin;
  private LogicModuleClient cluster;

  @BeforeEach
  void start() throws Exception {
    lm = new LogicModuleFixture("jdbc:sqlite:" + dir.resolve("metadata.db"));
    String name = "lm-" + UUID.randomUUID();
    server = LogicModuleServer.serving(InProcessServerBuilder.forName(name), lm.service).start();
    channel = InProcessChannelBuilder.forName(name).build();
    admin = client(lm.adminToken);
    cluster = client(lm.backendToken);
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.stop();
    lm.close();
  }

  private LogicModuleClient client(String token) {
    return new LogicModuleClient(channel, () -> token);
  }

  private static BackendInfo backend(String id, int port) {
    return BackendInfo.newBuilder().setId(id).setName("b-" + port).setHost("127.0.0.1").setPort(port)
        .addLanguages(Language.PYTHON).setStoreEngine("kv").build();
  }

  private static ObjectInfo object(String dataset, String backendId) {
    return ObjectInfo.newBuilder().setId(UUID.randomUUID().toString()).setClassName("shop.models.Item")
        .setLanguage(Language.PYTHON).setDataset(dataset).setMasterBackendId(backendId).build();
  }

  @Test
  void every_rpc_answers_its_happy_path() {
    // accounts and sessions
    assertEquals(LogicModuleService.VERSION, client(null).health(1000));
    admin.newAccount("alice", "alice-password", false);
    admin.setModelRegistration("alice", true);
    NewSession alice = client(null).newSession("alice", "alice-password", "");
    assertEquals(43, alice.token().length());
    assertEquals(List.of("alice"), alice.datasets());
    LogicModuleClient asAlice = client(alice.token());
    asAlice.newDataContract("alice.shared", "alice");
    io.dataclay.proto.SessionInfo validated = cluster.validateSession(alice.token());
    assertEquals("", validated.getToken());
    assertEquals(List.of("alice", "alice.shared"), validated.getDatasetsList());
    assertFalse(validated.getAdmin());
    // models
    Model model = Model.newBuilder().setNamespace("shop").setLanguage(Language.PYTHON)
        .addFiles(ModelFile.newBuilder().setPath("shop/models.py").setContent(ByteString.copyFromUtf8("class Item")))
        .addClasses(ClassDescription.newBuilder().setName("shop.models.Item")
            .addFields(FieldDescription.newBuilder().setName("price").setType("int"))
            .addMethods(MethodDescription.newBuilder().setName("discount").setSignature("(self, pct: int) -> int")))
        .build();
    asAlice.registerModel(model);
    Model stored = asAlice.getModel("shop");
    assertEquals(model.toBuilder().setOwner("alice").setVersion(1).build(), stored);
    assertEquals(List.of(stored), asAlice.listModels(Language.PYTHON));
    assertEquals(List.of(), asAlice.listModels(Language.JAVA));
    // backends
    String backendId = lm.backendId;
    cluster.registerBackend(backend(backendId, 7001));
    cluster.heartbeat(backendId, 0, 0, List.of());
    BackendInfo listed = asAlice.getBackends().get(0);
    assertEquals(backend(backendId, 7001).toBuilder().setAlive(true).build(), listed);
    assertEquals(List.of(new io.dataclay.api.BackendInfo(UUID.fromString(backendId), "b-7001", "127.0.0.1", 7001,
        List.of(io.dataclay.common.Language.PYTHON), true)), asAlice.backends());
    // objects and aliases
    ObjectInfo o = object("alice", backendId);
    cluster.registerObjects(List.of(o), "item-1", o.getId());
    UUID id = UUID.fromString(o.getId());
    UUID master = UUID.fromString(backendId);
    assertEquals(new StoredObject(id, "shop.models.Item", io.dataclay.common.Language.PYTHON, "alice", master,
        List.of(), List.of("item-1"), null), asAlice.getObjectInfo(o.getId()));
    assertEquals(id, asAlice.getObjectByAlias("item-1", "").id());
    asAlice.newAlias("item-one", o.getId());
    asAlice.deleteAlias("item-1", "alice");
    assertEquals(List.of("item-one"), asAlice.getObjectInfo(o.getId()).aliases());
    // listing
    Page<DatasetInfo> datasets = asAlice.listDatasets(true, 0, "");
    assertEquals(List.of(new DatasetInfo("alice", "alice", DatasetInfo.Access.OWNER, 0, 1),
        new DatasetInfo("alice.shared", "alice", DatasetInfo.Access.OWNER, 0, 0)), datasets.items());
    Page<AliasInfo> aliases = asAlice.listAliases("item-?ne", null, 0, "");
    assertEquals(List.of(new AliasInfo("item-one", "alice", id, "shop.models.Item", io.dataclay.common.Language.PYTHON,
        master)), aliases.items());
    Page<StoredObject> objects = asAlice.listObjects("shop.models.Item", null, 1, "");
    assertEquals(List.of(new StoredObject(id, "shop.models.Item", io.dataclay.common.Language.PYTHON, "alice", master,
        List.of(), List.of("item-one"), null)), objects.items());
    assertEquals("", objects.nextPageToken());
    assertThrows(InvalidArgumentException.class, () -> asAlice.listObjects(null, null, 0, "not-a-token"));
    assertThrows(PermissionDeniedException.class, () -> asAlice.listAliases(null, "admin", 0, ""));
    // stats, then closing the session
    assertThrows(PermissionDeniedException.class, asAlice::getStats);
    LogicModuleStats stats = admin.getStats();
    assertEquals(1, stats.getObjects());
    assertEquals(1, stats.getAliases());
    assertEquals(1, stats.getCallsOrThrow("RegisterObjects"));
    asAlice.closeSession();
    assertThrows(NotAuthenticatedException.class, asAlice::getBackends);
  }

  @Test
  void get_stats_counts_every_rpc_including_itself_and_failed_calls() {
    // setup
    long before = admin.getStats().getCallsOrDefault("GetObjectInfo", 0);
    // run
    assertThrows(InvalidArgumentException.class, () -> admin.getObjectInfo("nope"));
    client(null).health(1000);
    LogicModuleStats first = admin.getStats();
    LogicModuleStats second = admin.getStats();
    // verify
    assertEquals(before + 1, first.getCallsOrThrow("GetObjectInfo"));
    assertEquals(1, first.getCallsOrThrow("Health"));
    assertEquals(first.getCallsOrThrow("GetStats") + 1, second.getCallsOrThrow("GetStats"));
  }

  @Test
  void get_stats_answers_latency_per_rpc_the_cluster_events_and_sessions_per_account() {
    // setup
    client(null).health(1000);
    admin.collectGarbage();
    // run
    LogicModuleStats stats = admin.getStats();
    // verify: Health ended once, in one of gRFC A66's buckets; GetStats itself has not ended yet
    io.dataclay.proto.CallLatency health = stats.getLatencyOrThrow("Health");
    assertEquals(1, health.getCount());
    assertEquals(health.getBoundsSecondsCount() + 1, health.getCountsCount());
    assertEquals(1, health.getCountsList().stream().mapToLong(Long::longValue).sum());
    assertTrue(health.getSumSeconds() >= 0);
    assertFalse(stats.containsLatency("GetStats"));
    assertEquals(1, stats.getEventsCount());
    io.dataclay.proto.ClusterEvent gc = stats.getEvents(0);
    assertEquals("gc", gc.getKind());
    assertEquals(lm.clock.millis(), gc.getAtMs());
    assertTrue(gc.getDetail().endsWith("(admin)"), gc.getDetail());
    assertEquals(Map.of("admin", 1L), stats.getSessionsByAccountMap());
  }

  @Test
  void malformed_requests_are_invalid_argument_naming_the_field_and_the_server_keeps_serving() {
    // setup
    String backendId = lm.backendId;
    cluster.registerBackend(backend(backendId, 7001));
    LogicModuleClient anonymous = client(null);
    Map<String, Executable> bad = new LinkedHashMap<>();
    bad.put("username", () -> anonymous.newSession("", "pw", ""));
    bad.put("password", () -> anonymous.newSession("alice", "", ""));
    bad.put("dataset", () -> anonymous.newSession("admin", LogicModuleFixture.PASSWORD, "no/slash"));
    bad.put("token", () -> cluster.validateSession(""));
    bad.put("username:", () -> admin.newAccount("", "long-enough-password", false));
    bad.put("password:", () -> admin.newAccount("carol", "short", false));
    bad.put("beneficiary", () -> admin.newDataContract("shared", "bad name"));
    bad.put("namespace", () -> admin.registerModel(Model.newBuilder().setNamespace("").setLanguage(Language.JAVA)
        .addFiles(ModelFile.newBuilder().setPath("A.class")).build()));
    bad.put("language", () -> admin.registerModel(Model.newBuilder().setNamespace("ns")
        .addFiles(ModelFile.newBuilder().setPath("a.py")).build()));
    bad.put("files[0].path", () -> admin.registerModel(Model.newBuilder().setNamespace("ns")
        .setLanguage(Language.PYTHON).addFiles(ModelFile.newBuilder().setPath("../a.py")).build()));
    bad.put("id:", () -> cluster.registerBackend(backend("not-a-uuid", 7001)));
    bad.put("port", () -> cluster.registerBackend(backend(backendId, 70000)));
    bad.put("languages[0]", () -> cluster.registerBackend(backend(backendId, 7001).toBuilder()
        .setLanguages(0, Language.LANGUAGE_UNSPECIFIED).build()));
    bad.put("backend_id", () -> cluster.heartbeat("x", 0, 0, List.of()));
    bad.put("objects[0].language", () -> cluster.registerObjects(List.of(object("admin", backendId).toBuilder()
        .setLanguageValue(7).build()), "", ""));
    bad.put("objects[0].id", () -> cluster.registerObjects(List.of(object("admin", backendId).toBuilder()
        .setId("X").build()), "", ""));
    bad.put("objects[0].dataset", () -> cluster.registerObjects(List.of(object("", backendId)), "", ""));
    bad.put("objects:", () -> cluster.registerObjects(List.of(), "", ""));
    bad.put("expires_at_ms", () -> admin.newDataContract(io.dataclay.proto.NewDataContractRequest.newBuilder()
        .setDataset("shared").setBeneficiary("admin2").setBeginsAtMs(5_000).setExpiresAtMs(4_000).build()));
    bad.put("id", () -> admin.getObjectInfo("not-a-uuid"));
    bad.put("alias", () -> admin.getObjectByAlias("", ""));
    bad.put("object_id", () -> admin.newAlias("ok", "bad"));
    bad.put("alias:", () -> admin.deleteAlias("tab\there", ""));
    List<String> wrong = new ArrayList<>();
    // run
    for (Map.Entry<String, Executable> e : bad.entrySet()) {
      InvalidArgumentException thrown = assertThrows(InvalidArgumentException.class, e.getValue(), e.getKey());
      if (!thrown.getMessage().contains(e.getKey())) {
        wrong.add(e.getKey() + " -> " + thrown.getMessage());
      }
    }
    // verify
    assertEquals(List.of(), wrong);
    assertEquals(LogicModuleService.VERSION, anonymous.health(1000));
    assertEquals(1, admin.getBackends().size());
    assertEquals(0, admin.getStats().getObjects());
  }

  @Test
  void calls_without_a_valid_session_are_not_authenticated_and_admin_calls_need_an_admin() {
    // setup
    LogicModuleClient alice = client(lm.user("alice"));
    // run / verify
    assertThrows(NotAuthenticatedException.class, () -> client(null).getBackends());
    assertThrows(NotAuthenticatedException.class, () -> client("bogus").getStats());
    assertThrows(PermissionDeniedException.class, () -> alice.newAccount("bob", "long-enough-password", false));
    assertThrows(PermissionDeniedException.class,
        () -> alice.registerBackend(backend(UUID.randomUUID().toString(), 7001)));
    assertEquals(List.of(lm.backendId), admin.getBackends().stream().map(BackendInfo::getId).toList());
  }

  @Test
  void a_group_that_cannot_be_read_is_refused_alone_and_a_request_without_groups_as_a_whole() {
    // setup
    cluster.registerBackend(backend(lm.backendId, 7001));
    ObjectInfo good = object("admin", lm.backendId);
    ObjectInfo unreadable = object("admin", lm.backendId).toBuilder().setLanguageValue(7).build();
    // run
    List<ErrorInfo> outcomes = cluster.registerGroups(List.of(
        RegistrationGroup.newBuilder().addObjects(unreadable).build(),
        RegistrationGroup.newBuilder().addObjects(good).setAlias("kept").setAliasObjectId(good.getId()).build()));
    // verify
    assertEquals(ErrorCode.INVALID_ARGUMENT, outcomes.get(0).getCode());
    assertTrue(outcomes.get(0).getMessage().startsWith("groups[0].objects[0].language"), outcomes.get(0).getMessage());
    assertEquals(ErrorInfo.getDefaultInstance(), outcomes.get(1));
    assertEquals(good.getId(), admin.getObjectByAlias("kept", "").id().toString());
    InvalidArgumentException none =
        assertThrows(InvalidArgumentException.class, () -> cluster.registerGroups(List.of()));
    assertTrue(none.getMessage().startsWith("groups:"), none.getMessage());
  }

  @Test
  void a_large_batch_of_objects_passes_the_message_size_limit() {
    // setup
    String backendId = lm.backendId;
    cluster.registerBackend(backend(backendId, 7001));
    List<ObjectInfo> batch = new ArrayList<>();
    for (int i = 0; i < 100_000; i++) {
      batch.add(object("admin", backendId));
    }
    // run
    cluster.registerObjects(batch, "", "");
    // verify
    assertEquals(100_000, admin.getStats().getObjects());
  }
}
