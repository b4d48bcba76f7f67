package io.dataclay.logic.snapshot;

import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.metadata.MetadataCut;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an import brings besides its objects and aliases: its datasets (with how many of its objects
 * each receives), accounts and contracts, how many master copies and replicas each target backend
 * is to stage, what its administrator allows it to do, and whether it is only a dry run.
 */
public record ImportPlan(String source, List<MetadataCut.Dataset> datasets, Map<String, Long> datasetObjects,
    List<Account> accounts, List<ContractRecord> contracts, Map<String, ImportTables.Expected> targets,
    Set<ImportAllowance> allowed, boolean dryRun) {
  /** Copies the collections. */
  public ImportPlan {
    datasets = List.copyOf(datasets);
    datasetObjects = Map.copyOf(datasetObjects);
    accounts = List.copyOf(accounts);
    contracts = List.copyOf(contracts);
    targets = Map.copyOf(targets);
    allowed = Set.copyOf(allowed);
  }

  /**
   * An account of a snapshot: created when missing, with its exported password hash, or else with
   * {@code newPassword} (empty: none given); an existing account is left as it is.
   */
  public record Account(String username, boolean admin, boolean mayRegisterModels, String passwordHash,
      String passwordSalt, int passwordIterations, String newPassword) {
    /** Whether the snapshot carries the account's password hash. */
    public boolean hasHash() {
      return !passwordHash.isEmpty();
    }
  }

  /** The target backends that stage anything. */
  List<String> stagingTargets() {
    return targets.entrySet().stream().filter(e -> e.getValue().masters() + e.getValue().replicas() > 0)
        .map(Map.Entry::getKey).sorted().toList();
  }

  /** Checks every field (INVALID_ARGUMENT naming it); refuses the system accounts. */
  void validate() {
    Checks.text("plan.source", source, 4096);
    for (int i = 0; i < datasets.size(); i++) {
      Checks.name("plan.datasets[" + i + "].name", datasets.get(i).name());
      Checks.name("plan.datasets[" + i + "].owner", datasets.get(i).owner());
      if (datasetObjects.getOrDefault(datasets.get(i).name(), 0L) < 0) {
        throw Checks.invalid("plan.datasets[" + i + "].objects", "must not be negative");
      }
    }
    Set<String> usernames = new HashSet<>();
    for (int i = 0; i < accounts.size(); i++) {
      Account a = accounts.get(i);
      String at = "plan.accounts[" + i + "]";
      Checks.name(at + ".username", a.username());
      if (!usernames.add(a.username())) {
        throw Checks.invalid(at + ".username", "'" + a.username() + "' appears twice");
      }
      if (a.username().equals(AccountService.SYSTEM_ACCOUNT) || a.username().equals(AccountService.BACKEND_ACCOUNT)) {
        throw Checks.invalid(at + ".username", "'" + a.username() + "' is a system account, never imported");
      }
      if (a.hasHash() != !a.passwordSalt().isEmpty()) {
        throw Checks.invalid(at, "a password hash needs its salt, and a salt its hash");
      }
      if (a.hasHash()) {
        base64(at + ".password_hash", a.passwordHash());
        base64(at + ".password_salt", a.passwordSalt());
        if (a.passwordIterations() < 10_000 || a.passwordIterations() > 10_000_000) {
          throw Checks.invalid(at + ".password_iterations", "must be between 10000 and 10000000, got "
              + a.passwordIterations());
        }
      }
      if (!a.newPassword().isEmpty()) {
        Checks.newPassword(at + ".new_password", a.newPassword());
      }
    }
    for (int i = 0; i < contracts.size(); i++) {
      ContractRecord k = contracts.get(i);
      Checks.name("plan.contracts[" + i + "].dataset", k.dataset());
      Checks.name("plan.contracts[" + i + "].owner", k.owner());
      Checks.name("plan.contracts[" + i + "].beneficiary", k.beneficiary());
    }
    targets.forEach((backend, expected) -> {
      Checks.uuid("plan.targets.backend_id", backend);
      if (expected.masters() < 0 || expected.replicas() < 0) {
        throw Checks.invalid("plan.targets", "counts must not be negative");
      }
    });
  }

  private static void base64(String field, String value) {
    try {
      Base64.getDecoder().decode(value);
    } catch (IllegalArgumentException e) {
      throw Checks.invalid(field, "is not base64");
    }
  }
}
