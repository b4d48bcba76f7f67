package io.dataclay.logic.snapshot;

import io.dataclay.exceptions.AccountDoesNotExistException;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.models.ModelRegistrar;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.logging.Logger;

/**
 * An import being checked before anything is stored (docs/internals.md "Snapshots"): the plan
 * first, then models, object IDs and aliases, then {@link #open}. Nothing visible changes: aliases
 * go to a staging table, models are tried in a transaction that is rolled back. What the plan
 * would do to what this cluster has, and what it would create with power in it, needs the
 * plan's allowances ({@link ImportAllowance}): the snapshot's author chose its contents.
 */
public final class ImportOpening {

  private static final Logger LOG = Logger.getLogger(ImportOpening.class.getName());
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ImportCoordinator coordinator;
  private final MetadataStore store;
  private final BackendRegistry backends;
  private final ModelRegistrar models;
  private final String id;
  private final String admin;
  private ImportPlan plan;
  private final List<ModelRecord> toRegister = new ArrayList<>();
  private final Set<String> namespaces = new HashSet<>();
  private final Set<String> modelOwners = new HashSet<>();
  private final Map<String, Long> aliasesIn = new TreeMap<>();
  private long aliasCount;

  ImportOpening(ImportCoordinator coordinator, MetadataStore store, BackendRegistry backends, ModelRegistrar models,
      String admin) {
    byte[] bits = new byte[16];
    RANDOM.nextBytes(bits);
    this.id = HexFormat.of().formatHex(bits);
    this.coordinator = coordinator;
    this.store = store;
    this.backends = backends;
    this.models = models;
    this.admin = admin;
  }

  /** The plan (first, once). */
  public void plan(ImportPlan p) {
    if (plan != null) {
      throw new InvalidArgumentException("parts: the plan comes once, first");
    }
    p.validate();
    plan = p;
  }

  /**
   * A model of the snapshot: registered at the commit unless this cluster has the namespace with
   * the same code already. Its owner is the snapshot's when the plan brings that account or this
   * cluster has it, else the importing administrator.
   *
   * @throws NamespaceConflictException when the cluster has the namespace with other code, or a
   *     file or class of it belongs to another namespace
   */
  public void model(ModelRecord m) {
    requirePlan();
    models.check(m);
    if (!m.owner().isEmpty()) {
      Checks.name("model.owner", m.owner());
    }
    if (!namespaces.add(m.namespace())) {
      throw new InvalidArgumentException("model: namespace '" + m.namespace() + "' comes twice");
    }
    Optional<ModelRecord> present = store.models().find(m.namespace());
    if (present.isPresent()) {
      if (!sameCode(present.get(), m)) {
        throw new NamespaceConflictException("namespace '" + m.namespace() + "' is registered in this cluster with"
            + " other code than the snapshot's");
      }
      return;
    }
    ModelRecord owned = m.withOwnerAndVersion(ownerOf(m), 0);
    store.imports().checkModel(owned);
    toRegister.add(owned);
    modelOwners.add(m.owner());
  }

  /** A batch of the import's object IDs: none may be registered in this cluster. */
  public void ids(List<String> batch) {
    requirePlan();
    for (int i = 0; i < batch.size(); i++) {
      Checks.uuid("ids[" + i + "]", batch.get(i));
    }
    List<String> taken = store.imports().registeredAmong(batch);
    if (!taken.isEmpty()) {
      throw new ObjectAlreadyExistsException("object " + taken.get(0) + " (and " + (taken.size() - 1) + " more of"
          + " this batch) is already registered in this cluster: was this snapshot imported before?");
    }
  }

  /** A batch of the import's aliases: none may exist in this cluster. */
  public void aliases(List<MetadataCut.Alias> batch) {
    requirePlan();
    for (int i = 0; i < batch.size(); i++) {
      MetadataCut.Alias a = batch.get(i);
      Checks.name("aliases[" + i + "].dataset", a.dataset());
      Checks.alias("aliases[" + i + "].alias", a.alias());
      Checks.uuid("aliases[" + i + "].object_id", a.objectId());
    }
    List<MetadataCut.Alias> taken = store.imports().stageAliases(id, batch);
    if (!taken.isEmpty()) {
      throw new AliasAlreadyExistsException("alias '" + taken.get(0).alias() + "' already exists in dataset '"
          + taken.get(0).dataset() + "' of this cluster");
    }
    aliasCount += batch.size();
    batch.forEach(a -> aliasesIn.merge(a.dataset(), 1L, Long::sum));
  }

  /**
   * Opens the import when its accounts, datasets, contracts and targets fit this cluster and its
   * allowances cover what it needs; a dry run only answers what the import would do.
   *
   * @throws PermissionDeniedException when the plan needs what it was not allowed (naming it), or
   *     names a dataset another account owns here
   * @throws BackendUnavailableException when another import is open or a target backend is not alive
   */
  public ImportCoordinator.Opened open() {
    requirePlan();
    ImportNeeds needs = new ImportNeeds();
    List<String> create = accountsToCreate(needs);
    Set<String> created = new HashSet<>(create);
    Set<String> existingDatasets = existingDatasets(created, needs);
    Set<String> existingAccounts = new TreeSet<>();
    for (String name : namedAccounts()) {
      if (!created.contains(name) && store.accounts().find(name).isPresent()) {
        existingAccounts.add(name);
        needs.add(ImportAllowance.EXISTING_ACCOUNTS, "names account '" + name + "', which this cluster has");
      }
    }
    toRegister.forEach(m -> needs.add(ImportAllowance.MODELS, "registers model '" + m.namespace() + "' (owner '"
        + m.owner() + "')"));
    Set<String> alive = new HashSet<>();
    backends.alive().forEach(b -> alive.add(b.id()));
    for (String target : plan.targets().keySet()) {
      if (!alive.contains(target)) {
        throw new BackendDoesNotExistException("plan.targets: backend " + target + " is not a live backend of"
            + " this cluster");
      }
    }
    List<String> models = toRegister.stream().map(ModelRecord::namespace).toList();
    if (plan.dryRun()) {
      abandon();
      LOG.info("import dry run by " + admin + " from " + plan.source() + ": needs " + needs.flags());
      return new ImportCoordinator.Opened("", create, models, List.copyOf(existingAccounts),
          List.copyOf(existingDatasets), needs.flags());
    }
    needs.requireAllowed(plan.allowed());
    coordinator.open(id, admin, plan, toRegister, create);
    LOG.info("import " + id + " opened by " + admin + " from " + plan.source() + ": " + aliasCount + " aliases;"
        + " it needs " + needs.flags());
    return new ImportCoordinator.Opened(id, create, models, List.copyOf(existingAccounts),
        List.copyOf(existingDatasets), needs.flags());
  }

  /** The plan's accounts this cluster lacks, which the import creates (a dry run: also those without a password). */
  private List<String> accountsToCreate(ImportNeeds needs) {
    List<String> create = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (ImportPlan.Account a : plan.accounts()) {
      if (store.accounts().find(a.username()).isPresent()) {
        continue;
      }
      if (!a.hasHash() && a.newPassword().isEmpty() && !plan.dryRun()) {
        missing.add(a.username());
        continue;
      }
      create.add(a.username());
      needs.add(ImportAllowance.ACCOUNTS, "creates account '" + a.username() + "'");
      if (a.admin()) {
        needs.add(ImportAllowance.ADMINS, "creates administrator account '" + a.username() + "'");
      } else if (a.mayRegisterModels()) {
        needs.add(ImportAllowance.ADMINS, "creates account '" + a.username() + "', which may register models");
      }
      if (a.hasHash()) {
        needs.add(ImportAllowance.PASSWORD_HASHES, "gives account '" + a.username() + "' the snapshot's password hash");
      }
    }
    if (!missing.isEmpty()) {
      throw new AccountDoesNotExistException("accounts " + missing + " do not exist in this cluster and the"
          + " import brings no password for them: give them new passwords (dataclay import --passwords-file FILE),"
          + " let the snapshot's password hashes in if it has them (--allow password-hashes), or create them first"
          + " (dataclaycmd NewAccount)");
    }
    return create;
  }

  /**
   * Checks the plan's datasets and contracts against this cluster; the datasets the plan names
   * (with its contracts and aliases) that this cluster has, noting what the import would add to them.
   */
  private Set<String> existingDatasets(Set<String> created, ImportNeeds needs) {
    Set<String> existing = new TreeSet<>();
    for (MetadataCut.Dataset d : plan.datasets()) {
      Optional<String> owner = store.accounts().datasetOwner(d.name());
      if (owner.isPresent() && !owner.get().equals(d.owner())) {
        throw new PermissionDeniedException("dataset '" + d.name() + "' belongs to '" + owner.get() + "' in this"
            + " cluster, to '" + d.owner() + "' in the snapshot");
      }
      requireAccount(d.owner(), created);
      owner.ifPresent(o -> existing.add(d.name()));
    }
    for (ContractRecord k : plan.contracts()) {
      requireAccount(k.beneficiary(), created);
      if (store.accounts().datasetOwner(k.dataset()).isPresent()) {
        existing.add(k.dataset());
        needs.add(ImportAllowance.CONTRACTS_ON_EXISTING_DATASETS, "grants '" + k.beneficiary() + "' "
            + (k.readOnly() ? "read-only" : "read-write") + " access to dataset '" + k.dataset() + "', which this"
            + " cluster has");
      }
    }
    // aliases may name a dataset the plan does not list: the commit refuses those that exist nowhere
    aliasesIn.keySet().stream().filter(d -> store.accounts().datasetOwner(d).isPresent()).forEach(existing::add);
    for (String dataset : existing) {
      long objects = plan.datasetObjects().getOrDefault(dataset, 0L);
      long aliases = aliasesIn.getOrDefault(dataset, 0L);
      if (objects + aliases > 0) {
        needs.add(ImportAllowance.OBJECTS_IN_EXISTING_DATASETS, "adds " + objects + " objects and " + aliases
            + " aliases to dataset '" + dataset + "', which this cluster has");
      }
    }
    return existing;
  }

  /** Every account the plan names: its accounts, dataset owners, contract parties and model owners. */
  private Set<String> namedAccounts() {
    Set<String> named = new TreeSet<>();
    plan.accounts().forEach(a -> named.add(a.username()));
    plan.datasets().forEach(d -> named.add(d.owner()));
    plan.contracts().forEach(k -> {
      named.add(k.owner());
      named.add(k.beneficiary());
    });
    named.addAll(modelOwners);
    return named;
  }

  /** The parts could not be read or checked: forget what was staged for them. */
  public void abandon() {
    store.imports().drop(id);
  }

  private void requirePlan() {
    if (plan == null) {
      throw new InvalidArgumentException("parts: the plan must come first");
    }
  }

  private String ownerOf(ModelRecord m) {
    boolean planned = plan.accounts().stream().anyMatch(a -> a.username().equals(m.owner()));
    return planned || store.accounts().find(m.owner()).isPresent() ? m.owner() : admin;
  }

  private void requireAccount(String username, Set<String> created) {
    if (!created.contains(username) && store.accounts().find(username).isEmpty()) {
      throw new AccountDoesNotExistException("account '" + username + "' does not exist in this cluster and the"
          + " snapshot does not bring it");
    }
  }

  private static boolean sameCode(ModelRecord a, ModelRecord b) {
    if (a.language() != b.language() || a.files().size() != b.files().size()) {
      return false;
    }
    Map<String, byte[]> files = new HashMap<>();
    a.files().forEach(f -> files.put(f.path(), f.content()));
    return b.files().stream().allMatch(f -> files.containsKey(f.path()) && Arrays.equals(files.get(f.path()), f.content()));
  }
}
