package io.dataclay.logic;

import io.dataclay.api.AliasInfo;
import io.dataclay.api.DataClay;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.common.Language;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.listing.ListingService;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.testing.LogicModuleFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * javaclay's public listing calls (DataClay.listDatasets, listAliases, listObjects) against a real
 * Logic Module served on a local port, as a Java program uses them.
 */
@Timeout(60)
class JavaClientListingTest {
  private static final int ALIASES = ListingService.DEFAULT_PAGE_SIZE + 30;

  @TempDir
  Path dir;
  private LogicModuleFixture lm;
  private GrpcServer server;
  private String backend;

  @BeforeEach
  void start() throws Exception {
    lm = new LogicModuleFixture("jdbc:sqlite:" + dir.resolve("metadata.db"));
    server = LogicModuleServer.listening("127.0.0.1", 0, TlsSettings.plaintext(), lm.service, 4 << 20).start();
    String alice = lm.user("alice");
    String bob = lm.user("bob");
    backend = lm.backend(7001);
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.notes", "alice"));
    lm.service.newDataContract(bob, new io.dataclay.logic.metadata.ContractRecord("bob.shared", "", "alice", true, 0,
        0));
    List<ObjectGroup> groups = new ArrayList<>();
    for (int i = 0; i < ALIASES; i++) {
      ObjectRecord o = object("alice", "org.example.Item");
      groups.add(new ObjectGroup(List.of(o), String.format("item-%03d", i), o.id()));
    }
    ObjectRecord shared = object("bob.shared", "org.example.Doc");
    groups.add(new ObjectGroup(List.of(shared), "doc", shared.id()));
    ObjectRecord hidden = object("bob", "org.example.Doc");
    groups.add(new ObjectGroup(List.of(hidden), "item-bob", hidden.id()));
    lm.service.registerObjects(lm.backendToken, groups).forEach(g -> assertTrue(g.isEmpty()));
    Path config = dir.resolve("client.properties");
    Files.writeString(config, "DATACLAY_HOST=127.0.0.1\nDATACLAY_PORT=" + server.port() + "\nDATACLAY_USER=alice\n"
        + "DATACLAY_PASSWORD=" + LogicModuleFixture.PASSWORD + "\n");
    DataClay.init(config);
  }

  @AfterEach
  void stop() {
    DataClay.finish();
    server.stop();
    lm.close();
  }

  private ObjectRecord object(String dataset, String className) {
    return new ObjectRecord(UUID.randomUUID().toString(), className, Language.JAVA, dataset, backend, List.of(),
        List.of(), "");
  }

  private long listAliasCalls() {
    return lm.service.stats(lm.adminToken).calls().getOrDefault("ListAliases", 0L);
  }

  @Test
  void a_java_program_lists_its_datasets_aliases_and_objects_lazily() {
    // run
    List<DatasetInfo> datasets = DataClay.listDatasets().toList();
    long before = listAliasCalls();
    List<String> firstThree = DataClay.listAliases("item-*").limit(3).map(AliasInfo::alias).toList();
    long afterThree = listAliasCalls();
    List<AliasInfo> items = DataClay.listAliases("item-*").toList();
    long afterAll = listAliasCalls();
    List<StoredObject> docs = DataClay.listObjects("org.example.Doc", null).toList();
    // verify
    assertEquals(List.of(new DatasetInfo("alice", "alice", DatasetInfo.Access.OWNER, 0, ALIASES),
        new DatasetInfo("alice.notes", "alice", DatasetInfo.Access.OWNER, 0, 0),
        new DatasetInfo("bob.shared", "bob", DatasetInfo.Access.READ_ONLY, 0, 1)), datasets);
    assertEquals(List.of("item-000", "item-001", "item-002"), firstThree);
    assertEquals(1, afterThree - before, "three aliases need one page");
    assertEquals(ALIASES, items.size(), "bob's item-bob is not alice's to see");
    assertEquals(2, afterAll - afterThree, "130 aliases in pages of 100");
    assertEquals(UUID.fromString(backend), items.get(0).backendId());
    assertEquals(1, docs.size());
    assertEquals(List.of("doc"), docs.get(0).aliases());
    assertEquals("bob.shared", docs.get(0).dataset());
  }

  @Test
  void a_dataset_the_program_may_not_see_is_refused_and_so_is_listing_after_finish() {
    // run / verify
    assertThrows(PermissionDeniedException.class, () -> DataClay.listAliases("*", "bob").toList());
    DataClay.finish();
    assertThrows(DataClayException.class, DataClay::listDatasets);
  }
}
