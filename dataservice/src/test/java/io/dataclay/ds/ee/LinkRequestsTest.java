package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.MessageLite;
import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.proto.BackendList;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.CallMethodResponse;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.GetObjectsRequest;
import io.dataclay.proto.GetObjectsResponse;
import io.dataclay.proto.LoadReply;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.NewAccountRequest;
import io.dataclay.proto.NewDataContractRequest;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.RelayReply;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a process may ask of its Data Service while a call runs: object state ({@code load}) and
 * calls to servers ({@code relay}), both answered in that call's session and nothing beyond it.
 */
@Timeout(60)
class LinkRequestsTest {
  private static final String DS = "/dataclay.v1.DataService/";
  private static final String LM = "/dataclay.v1.LogicModule/";

  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  static String janeToken;
  static String omarToken;
  DataServiceClient jane;
  UUID mine;
  UUID alsoMine;
  UUID omars;
  UUID javaObject;
  CompletableFuture<byte[]> call;
  EnvironmentPeer peer;
  ExecuteRequest req;
  String backendId;

  @BeforeAll
  static void logIn() throws Exception {
    janeToken = cluster.session("jane");
    omarToken = cluster.session("omar");
  }

  @BeforeEach
  void startACall() throws Exception {
    // jane's call on her object is in flight in her process; omar has an object she may not read
    cluster.startDataService(Map.of());
    backendId = cluster.node().identity().id().toString();
    jane = cluster.client(janeToken);
    mine = UUID.randomUUID();
    alsoMine = UUID.randomUUID();
    omars = UUID.randomUUID();
    javaObject = UUID.randomUUID();
    jane.makePersistent(List.of(point(mine, "mine"), point(alsoMine, "also mine")), null);
    cluster.client(omarToken).makePersistent(List.of(point(omars, "omar's")), null);
    cluster.store().put(new StoredObject(javaObject,
        ObjectHeader.of("gen.Thing", io.dataclay.common.Language.JAVA, "jane"), Map.of()));
    call = cluster.call(jane, mine, "m", "()");
    peer = cluster.attach();
    req = peer.nextExecute();
  }

  private static void assertRefused(ErrorCode code, LoadReply reply) {
    assertEquals(code, reply.getError().getCode(), reply.toString());
    assertEquals(0, reply.getObjectsCount(), "a refused load returns nothing");
  }

  private static void assertRefused(ErrorCode code, RelayReply reply) {
    assertEquals(code, reply.getError().getCode(), reply.toString());
    assertEquals(0, reply.getResponse().size(), "a refused relay returns nothing");
  }

  private RelayReply relay(String target, String method, MessageLite request) throws Exception {
    return peer.relay(req.getCallId(), target, method, request);
  }

  // ---- load -------------------------------------------------------------------------------------

  @Test
  void a_load_answers_the_stored_state_of_the_callers_objects() throws Exception {
    // run
    LoadReply reply = peer.load(req.getCallId(), mine.toString(), alsoMine.toString());
    // verify
    assertEquals(ErrorCode.ERROR_UNSPECIFIED, reply.getError().getCode(), reply.toString());
    assertEquals(List.of(mine.toString(), alsoMine.toString()),
        reply.getObjectsList().stream().map(ObjectData::getId).toList());
    ObjectData first = reply.getObjects(0);
    assertEquals("shapes.Point", first.getHeader().getClassName());
    assertEquals("jane", first.getHeader().getDataset());
    assertEquals("mine", text(first.getFields(0).getValue()));
  }

  @Test
  void a_load_naming_a_call_not_in_flight_is_refused() throws Exception {
    // run: a call ID never sent, then the real one once its call has been answered
    LoadReply madeUp = peer.load(req.getCallId() + 77, mine.toString());
    peer.answer(req, "done");
    call.get(10, TimeUnit.SECONDS);
    LoadReply finished = peer.load(req.getCallId(), mine.toString());
    // verify
    assertRefused(ErrorCode.PERMISSION_DENIED, madeUp);
    assertRefused(ErrorCode.PERMISSION_DENIED, finished);
  }

  @Test
  void a_load_of_an_object_the_caller_may_not_read_is_refused_whole() throws Exception {
    // run
    LoadReply reply = peer.load(req.getCallId(), mine.toString(), omars.toString());
    // verify: nothing of omar's, nor of the rest of the request; refused as if not stored here
    assertRefused(ErrorCode.OBJECT_NOT_HERE, reply);
    assertTrue(reply.getError().getMessage().contains(omars.toString()), reply.getError().getMessage());
  }

  @Test
  void an_object_not_stored_here_is_absent_from_the_answer() throws Exception {
    // run
    LoadReply reply = peer.load(req.getCallId(), UUID.randomUUID().toString(), mine.toString());
    // verify
    assertEquals(ErrorCode.ERROR_UNSPECIFIED, reply.getError().getCode(), reply.toString());
    assertEquals(List.of(mine.toString()), reply.getObjectsList().stream().map(ObjectData::getId).toList());
  }

  @Test
  void an_object_of_another_language_or_a_malformed_id_is_refused() throws Exception {
    // run
    LoadReply java = peer.load(req.getCallId(), javaObject.toString());
    LoadReply malformed = peer.load(req.getCallId(), "not-an-id");
    // verify
    assertRefused(ErrorCode.INVALID_ARGUMENT, java);
    assertTrue(java.getError().getMessage().contains("JAVA"), java.getError().getMessage());
    assertRefused(ErrorCode.INVALID_ARGUMENT, malformed);
    assertTrue(malformed.getError().getMessage().contains("load.ids[0]"), malformed.getError().getMessage());
  }

  // ---- relay ------------------------------------------------------------------------------------

  @Test
  void calls_off_the_allow_list_are_refused_and_do_nothing() throws Exception {
    // run: what an account may do outside calls on data
    RelayReply contract = relay("", LM + "NewDataContract",
        NewDataContractRequest.newBuilder().setDataset("jane").setBeneficiary("omar").build());
    RelayReply account = relay("", LM + "NewAccount",
        NewAccountRequest.newBuilder().setUsername("mallory").setPassword("mallory-password").build());
    RelayReply deploy = relay(backendId, DS + "DeployModels", ModelList.getDefaultInstance());
    RelayReply status = relay(backendId, DS + "GetStatus", Empty.getDefaultInstance());
    RelayReply session = relay("", LM + "NewSession", Empty.getDefaultInstance());
    // verify: each refused, and neither the contract nor the account exists
    for (RelayReply r : List.of(contract, account, deploy, status, session)) {
      assertRefused(ErrorCode.PERMISSION_DENIED, r);
      assertEquals(Status.Code.PERMISSION_DENIED.value(), r.getStatusCode());
    }
    assertTrue(cluster.lmAs(janeToken).listDataContracts().isEmpty());
    DataServiceClient omar = cluster.client(cluster.session("omar"));
    assertThrows(DataClayException.class, () -> omar.getObjects(List.of(mine.toString())));
    assertThrows(DataClayException.class,
        () -> cluster.lmAs(null).newSession("mallory", "mallory-password", ""));
  }

  @Test
  void an_allowed_call_is_made_in_the_callers_session() throws Exception {
    // run: the backend list from the Logic Module, then objects from this backend by its ID and by its address
    RelayReply backends = relay("", LM + "GetBackends", Empty.getDefaultInstance());
    RelayReply own = relay(backendId, DS + "GetObjects", GetObjectsRequest.newBuilder().addIds(mine.toString()).build());
    RelayReply byAddress = relay("127.0.0.1:" + cluster.port(), DS + "GetObjects",
        GetObjectsRequest.newBuilder().addIds(alsoMine.toString()).build());
    RelayReply foreign = relay(backendId, DS + "GetObjects",
        GetObjectsRequest.newBuilder().addIds(omars.toString()).build());
    // verify: what jane may see, and not what the backend itself could (omar's object)
    assertEquals(0, backends.getStatusCode(), backends.toString());
    assertTrue(BackendList.parseFrom(backends.getResponse()).getBackendsList().stream()
        .anyMatch(b -> b.getId().equals(backendId)), backends.toString());
    assertEquals(0, own.getStatusCode(), own.toString());
    assertEquals("mine", text(GetObjectsResponse.parseFrom(own.getResponse()).getObjects(0).getFields(0).getValue()));
    assertEquals(0, byAddress.getStatusCode(), byAddress.toString());
    assertEquals(alsoMine.toString(), GetObjectsResponse.parseFrom(byAddress.getResponse()).getObjects(0).getId());
    assertRefused(ErrorCode.OBJECT_NOT_HERE, foreign); // as if not stored here: no ID oracle
  }

  @Test
  void a_relayed_method_call_runs_in_the_callers_process_as_a_call_of_the_caller() throws Exception {
    // setup
    CompletableFuture<RelayReply> relayed = cluster.async(() -> {
      try {
        return relay(backendId, DS + "CallMethod", CallMethodRequest.newBuilder().setObjectId(alsoMine.toString())
            .setMethod("inner").build());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    // run: the nested call comes back to this process, while the outer call still runs
    ExecuteRequest nested = peer.nextExecute();
    peer.answer(nested, "inner result");
    RelayReply reply = relayed.get(10, TimeUnit.SECONDS);
    peer.answer(req, "outer result");
    // verify
    assertEquals(alsoMine.toString(), nested.getObjectId());
    assertEquals("jane", nested.getCaller().getUsername());
    assertEquals(0, reply.getStatusCode(), reply.toString());
    assertEquals("inner result", text(CallMethodResponse.parseFrom(reply.getResponse()).getResult()));
    assertEquals("outer result", new String(call.get(10, TimeUnit.SECONDS)));
  }

  @Test
  void a_target_that_is_not_a_registered_backend_is_refused_and_never_connected_to() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      listener.setSoTimeout(500);
      // run
      RelayReply local = relay("127.0.0.1:" + listener.getLocalPort(), DS + "CallMethod",
          CallMethodRequest.newBuilder().setObjectId(mine.toString()).setMethod("m").build());
      RelayReply ssh = relay("127.0.0.1:22", DS + "GetObjects", GetObjectsRequest.getDefaultInstance());
      RelayReply madeUp = relay(UUID.randomUUID().toString(), DS + "GetObjects", GetObjectsRequest.getDefaultInstance());
      // verify
      for (RelayReply r : List.of(local, ssh, madeUp)) {
        assertRefused(ErrorCode.BACKEND_DOES_NOT_EXIST, r);
      }
      assertThrows(SocketTimeoutException.class, listener::accept, "the Data Service connected to the target");
    }
  }

  @Test
  void a_relay_naming_a_call_not_in_flight_is_refused() throws Exception {
    // run
    RelayReply reply = peer.relay(req.getCallId() + 5, "", LM + "GetBackends", Empty.getDefaultInstance());
    // verify
    assertRefused(ErrorCode.PERMISSION_DENIED, reply);
  }
}
