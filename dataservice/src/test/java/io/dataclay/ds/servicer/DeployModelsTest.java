package io.dataclay.ds.servicer;

import static io.dataclay.ds.TestObjects.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.Language;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ModelList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class DeployModelsTest {
  @TempDir static Path tmp;
  static TestCluster cluster;
  DataServiceClient admin;
  Path models;

  @BeforeAll
  static void startLogicModule() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
  }

  @AfterAll
  static void stopLogicModule() throws Exception {
    cluster.close();
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(java.util.Map.of());
    admin = cluster.client(cluster.backendToken());
    models = cluster.backendDir().resolve("models").resolve("python");
  }

  @AfterEach
  void stopDataService() throws Exception {
    cluster.stopDataService();
  }

  private static Model model(String namespace, long version, String className, String... pathsAndContents) {
    Model.Builder m = Model.newBuilder().setNamespace(namespace).setLanguage(Language.PYTHON).setVersion(version)
        .addClasses(ClassDescription.newBuilder().setName(className));
    for (int i = 0; i < pathsAndContents.length; i += 2) {
      m.addFiles(ModelFile.newBuilder().setPath(pathsAndContents[i]).setContent(bytes(pathsAndContents[i + 1])));
    }
    return m.build();
  }

  @Test
  void models_registered_before_start_are_installed_from_the_logic_module() throws Exception {
    assertEquals("class Point:\n    x: str\n", Files.readString(models.resolve("shapes.py")));
  }

  @Test
  void deployed_files_are_written_and_their_classes_accepted_by_make_persistent() throws Exception {
    // setup
    DataServiceClient user = cluster.client(cluster.session("hana"));
    UUID id = UUID.randomUUID();
    assertThrows(ClassNotRegisteredException.class, () -> user.makePersistent(
        List.of(TestObjects.object(id, "geo.shapes.Circle", Language.PYTHON, "r", "1")), null));
    // run
    admin.deployModels(List.of(model("geo", 5, "geo.shapes.Circle", "geo/shapes.py", "class Circle: pass\n")));
    // verify
    assertEquals("class Circle: pass\n", Files.readString(models.resolve("geo/shapes.py")));
    user.makePersistent(List.of(TestObjects.object(id, "geo.shapes.Circle", Language.PYTHON, "r", "1")), null);
    assertEquals(1, user.getObjects(List.of(id.toString())).size());
  }

  @Test
  void unsafe_paths_are_refused_and_nothing_of_the_request_is_written() {
    for (String bad : List.of("../escape.py", "/tmp/abs.py", "pkg/../../escape.py")) {
      // run
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> admin.deployModels(
          List.of(model("evil", 1, "evil.Ok", "evil/ok.py", "x = 1\n", bad, "import os\n"))));
      // verify
      assertTrue(e.getMessage().startsWith("models[0].files[1].path"), e.getMessage());
      assertFalse(Files.exists(models.resolve("evil/ok.py")));
      assertFalse(Files.exists(cluster.backendDir().resolve("models/escape.py")));
      assertFalse(Files.exists(cluster.backendDir().resolve("escape.py")));
    }
  }

  @Test
  void deploying_needs_an_administrator_session() {
    DataServiceClient user = cluster.client(cluster.session("ivan"));
    assertThrows(PermissionDeniedException.class,
        () -> user.deployModels(List.of(model("mine", 1, "mine.C", "mine.py", "class C: pass\n"))));
    assertFalse(Files.exists(models.resolve("mine.py")));
  }

  @Test
  void an_older_version_never_replaces_a_newer_one() throws Exception {
    // setup
    admin.deployModels(List.of(model("ver", 7, "ver.C", "ver.py", "seven = 7\n")));
    // run
    admin.deployModels(List.of(model("ver", 6, "ver.C", "ver.py", "six = 6\n")));
    // verify
    assertEquals("seven = 7\n", Files.readString(models.resolve("ver.py")));
  }

  @Test
  void a_new_process_gets_the_registered_models_and_later_deploys_as_the_whole_list() throws Exception {
    // setup: a user's first call starts their process
    DataServiceClient user = cluster.client(cluster.session("judy"));
    UUID id = UUID.randomUUID();
    user.makePersistent(List.of(TestObjects.point(id, "0")), null);
    var call = cluster.call(user, id, "m", "()");
    EnvironmentPeer peer = cluster.nextPeer();
    // run
    ModelList first = peer.hello();
    peer.answer(peer.nextExecute(), "ok");
    call.get(10, java.util.concurrent.TimeUnit.SECONDS);
    admin.deployModels(List.of(model("fwd", 2, "fwd.C", "fwd.py", "class C: pass\n")));
    // verify: the models registered before, then every model again with the new one
    assertEquals(List.of("shapes"), first.getModelsList().stream().map(Model::getNamespace).toList());
    assertEquals("shapes.py", first.getModels(0).getFiles(0).getPath());
    assertEquals("class Point:\n    x: str\n", first.getModels(0).getFiles(0).getContent().toStringUtf8());
    DataServiceMessage m = peer.next();
    assertTrue(m.hasDeploy(), m.toString());
    Model sent = m.getDeploy().getModelsList().stream().filter(x -> x.getNamespace().equals("fwd")).findFirst()
        .orElseThrow();
    assertEquals(2, sent.getVersion());
    assertEquals("fwd.py", sent.getFiles(0).getPath());
    assertEquals(List.of("fwd.C"), sent.getClassesList().stream().map(ClassDescription::getName).toList());
    assertEquals(Set.of("shapes", "fwd"), m.getDeploy().getModelsList().stream().map(Model::getNamespace)
        .collect(Collectors.toSet()));
  }
}
