package io.dataclay.logic.snapshot;

import io.dataclay.common.Language;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What BeginImport lets a plan do: only what its allowances name, checked before anything is opened. */
@Timeout(60)
class ImportRulesTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;

  @BeforeEach
  void start() {
    lm.user("alice");
    lm.user("mallory");
  }

  private static ImportPlan.Account account(String name, boolean admin) {
    return new ImportPlan.Account(name, admin, false, "", "", 0, name + "-new-password-1");
  }

  private static ImportPlan plan(List<ImportPlan.Account> accounts, List<MetadataCut.Dataset> datasets,
      Map<String, Long> objects, List<ContractRecord> contracts, Set<ImportAllowance> allowed, boolean dryRun) {
    return new ImportPlan("test", datasets, objects, accounts, contracts, Map.of(), allowed, dryRun);
  }

  private static ModelRecord model(String namespace, String owner) {
    return new ModelRecord(namespace, Language.PYTHON, owner, 0,
        List.of(new ModelRecord.File(namespace + "/m.py", "class C: pass\n".getBytes())),
        List.of(new ModelRecord.ClassInfo(namespace + ".m.C", List.of(), List.of())));
  }

  /** The attack of issue 21 in one plan: an administrator, a contract and an object on alice's dataset, a model. */
  private ImportOpening attack(Set<ImportAllowance> allowed, boolean dryRun) {
    ImportOpening opening = lm.service.beginImport(lm.adminToken);
    opening.plan(plan(List.of(account("eve", true)), List.of(new MetadataCut.Dataset("alice", "alice")),
        Map.of("alice", 1L), List.of(new ContractRecord("alice", "alice", "mallory", false, 0, 0)), allowed, dryRun));
    opening.model(model("evil", "eve"));
    opening.aliases(List.of(new MetadataCut.Alias("alice", "planted", UUID.randomUUID().toString())));
    return opening;
  }

  @Test
  void aPlanNeedingWhatItWasNotAllowedIsRefusedNamingEachAllowance() {
    // setup
    ImportOpening opening = attack(EnumSet.of(ImportAllowance.ACCOUNTS, ImportAllowance.MODELS), false);
    // run
    PermissionDeniedException refused = assertThrows(PermissionDeniedException.class, opening::open);
    // verify: each missing allowance and what needs it; nothing was opened or created
    String message = refused.getMessage();
    assertTrue(message.contains("admins (it creates administrator account 'eve')"), message);
    assertTrue(message.contains("existing-accounts (it names account 'alice', which this cluster has"), message);
    assertTrue(message.contains("contracts-on-existing-datasets (it grants 'mallory' read-write access to dataset"
        + " 'alice'"), message);
    assertTrue(message.contains("objects-in-existing-datasets (it adds 1 objects and 1 aliases to dataset 'alice'"),
        message);
    assertTrue(message.contains("--allow admins,existing-accounts,contracts-on-existing-datasets,"
        + "objects-in-existing-datasets"), message);
    assertFalse(message.contains("models ("), message);
    assertTrue(lm.store.accounts().find("eve").isEmpty());
    opening.abandon();
  }

  @Test
  void aDryRunSaysWhatTheImportNeedsAndOpensNothing() {
    // run
    ImportCoordinator.Opened described = attack(Set.of(), true).open();
    ImportCoordinator.Opened opened = attack(EnumSet.allOf(ImportAllowance.class), false).open();
    // verify: the dry run has no ID and blocked nothing; the real one with every allowance opened
    assertEquals("", described.id());
    assertEquals(List.of("accounts", "admins", "existing-accounts", "contracts-on-existing-datasets",
        "objects-in-existing-datasets", "models"), described.needs());
    assertEquals(List.of("eve"), described.accountsToCreate());
    assertEquals(List.of("alice", "mallory"), described.existingAccounts());
    assertEquals(List.of("alice"), described.existingDatasets());
    assertEquals(List.of("evil"), described.modelsToRegister());
    assertEquals(32, opened.id().length());
    assertEquals(described.needs(), opened.needs());
  }

  @Test
  void aHashedAccountNeedsPasswordHashesAModelerAdminsAndANewDatasetOfANewAccountOnlyAccounts() {
    // setup
    ImportPlan.Account hashed = new ImportPlan.Account("carol", false, false, "aGFzaA==", "c2FsdA==", 10_000, "");
    ImportOpening withHash = lm.service.beginImport(lm.adminToken);
    withHash.plan(plan(List.of(hashed), List.of(new MetadataCut.Dataset("carol", "carol")), Map.of("carol", 5L),
        List.of(), EnumSet.of(ImportAllowance.ACCOUNTS), false));
    ImportOpening modeler = lm.service.beginImport(lm.adminToken);
    modeler.plan(plan(List.of(new ImportPlan.Account("erin", false, true, "", "", 0, "erin-new-password-1")),
        List.of(), Map.of(), List.of(), EnumSet.of(ImportAllowance.ACCOUNTS), true));
    ImportOpening fresh = lm.service.beginImport(lm.adminToken);
    fresh.plan(plan(List.of(account("dave", false)), List.of(new MetadataCut.Dataset("dave", "dave")),
        Map.of("dave", 5L), List.of(new ContractRecord("dave", "dave", "dave", true, 0, 0)),
        EnumSet.of(ImportAllowance.ACCOUNTS), false));
    // run and verify
    PermissionDeniedException refused = assertThrows(PermissionDeniedException.class, withHash::open);
    assertTrue(refused.getMessage().contains("password-hashes (it gives account 'carol' the snapshot's password"
        + " hash)"), refused.getMessage());
    withHash.abandon();
    assertEquals(List.of("accounts", "admins"), modeler.open().needs());
    assertEquals(List.of("accounts"), fresh.open().needs());
  }
}
