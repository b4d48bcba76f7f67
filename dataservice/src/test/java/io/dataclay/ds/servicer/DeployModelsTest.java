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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class DeployModelsTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  DataServiceClient admin;
  Path models;

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(java.util.Map.of());
    admin = cluster.client(cluster.backendToken());
    models = cluster.backendDir().resolve("models").resolve("python");
  }
  private static Model model(String namespace, long version, String className, String... pathsAndContents) {
    Model.Builder m = Model.newBuilder().setNamespace(namespace).setLanguage(Language.PYTHON).setVersion(version)
        .setOwner(TestCluster.ADMIN).setPublished(true).addClasses(ClassDescription.newBuilder().setName(className));
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

  @Test
  void an_unpublished_models_classes_are_refused_to_other_accounts_naming_the_model_and_its_owner() throws Exception {
    // setup: hana's model, not published
    DataServiceClient owner = cluster.client(cluster.session("hana"));
    DataServiceClient other = cluster.client(cluster.session("ivan"));
    admin.deployModels(List.of(model("mine", 1, "mine.C", "mine.py", "class C: pass\n").toBuilder()
        .setOwner("hana").setPublished(false).setRevision(1).build()));
    // run
    owner.makePersistent(List.of(TestObjects.object(UUID.randomUUID(), "mine.C", Language.PYTHON, "r", "1")), null);
    PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> other.makePersistent(
        List.of(TestObjects.object(UUID.randomUUID(), "mine.C", Language.PYTHON, "r", "1")), null));
    // verify
    assertTrue(e.getMessage().contains("'mine'") && e.getMessage().contains("'hana'")
        && e.getMessage().contains("PublishModel"), e.getMessage());
  }

  @Test
  void a_withdrawal_deletes_the_files_and_refuses_the_classes_and_a_newer_deploy_restores_them() throws Exception {
    // setup
    DataServiceClient user = cluster.client(cluster.session("hana"));
    Model installed = model("wd", 1, "wd.C", "wd.py", "class C: pass\n").toBuilder().setRevision(10).build();
    admin.deployModels(List.of(installed));
    // run
    admin.deployModels(List.of(installed.toBuilder().clearFiles().setWithdrawn(true).setRevision(11).build()));
    boolean fileAfterWithdrawal = Files.exists(models.resolve("wd.py"));
    ClassNotRegisteredException refused = assertThrows(ClassNotRegisteredException.class, () -> user.makePersistent(
        List.of(TestObjects.object(UUID.randomUUID(), "wd.C", Language.PYTHON, "r", "1")), null));
    admin.deployModels(List.of(installed)); // late: older than the withdrawal
    boolean fileAfterLateDeploy = Files.exists(models.resolve("wd.py"));
    admin.deployModels(List.of(installed.toBuilder().setRevision(12).build()));
    // verify
    assertFalse(fileAfterWithdrawal);
    assertTrue(refused.getMessage().contains("revoked"), refused.getMessage());
    assertFalse(fileAfterLateDeploy);
    assertTrue(Files.exists(models.resolve("wd.py")));
    user.makePersistent(List.of(TestObjects.object(UUID.randomUUID(), "wd.C", Language.PYTHON, "r", "1")), null);
  }

  @Test
  void a_removal_deletes_the_files_and_forgets_the_classes_and_only_backends_may_send_it() throws Exception {
    // setup
    DataServiceClient user = cluster.client(cluster.session("hana"));
    admin.deployModels(List.of(model("rm", 1, "rm.C", "rm/c.py", "class C: pass\n").toBuilder().setRevision(20)
        .build()));
    // run
    assertThrows(PermissionDeniedException.class, () -> user.removeModels(List.of("rm"), 21));
    boolean keptAfterUser = Files.exists(models.resolve("rm/c.py"));
    InvalidArgumentException bad = assertThrows(InvalidArgumentException.class,
        () -> admin.removeModels(List.of(""), 21));
    admin.removeModels(List.of("rm"), 19); // older than what is installed: ignored
    boolean keptAfterStale = Files.exists(models.resolve("rm/c.py"));
    admin.removeModels(List.of("rm"), 21);
    // verify
    assertTrue(keptAfterUser);
    assertTrue(bad.getMessage().startsWith("namespaces[0]"), bad.getMessage());
    assertTrue(keptAfterStale);
    assertFalse(Files.exists(models.resolve("rm")));
    ClassNotRegisteredException e = assertThrows(ClassNotRegisteredException.class, () -> user.makePersistent(
        List.of(TestObjects.object(UUID.randomUUID(), "rm.C", Language.PYTHON, "r", "1")), null));
    assertTrue(e.getMessage().contains("rm.C"), e.getMessage());
  }

  @Test
  void a_model_without_an_owner_or_a_withdrawn_one_with_files_is_refused_naming_the_field() {
    InvalidArgumentException noOwner = assertThrows(InvalidArgumentException.class, () -> admin.deployModels(
        List.of(model("x", 1, "x.C", "x.py", "pass\n").toBuilder().clearOwner().build())));
    InvalidArgumentException withFiles = assertThrows(InvalidArgumentException.class, () -> admin.deployModels(
        List.of(model("x", 1, "x.C", "x.py", "pass\n").toBuilder().setWithdrawn(true).build())));
    assertTrue(noOwner.getMessage().startsWith("models[0].owner"), noOwner.getMessage());
    assertTrue(withFiles.getMessage().startsWith("models[0].files"), withFiles.getMessage());
    assertFalse(Files.exists(models.resolve("x.py")));
  }
}
