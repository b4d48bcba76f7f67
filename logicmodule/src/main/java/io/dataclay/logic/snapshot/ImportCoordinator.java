package io.dataclay.logic.snapshot;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.accounts.Passwords;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.backends.SnapshotCalls;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.models.ModelRegistrar;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Runs imports, one at a time (docs/internals.md "Snapshots"): checks a plan against the cluster
 * before anything is stored ({@link ImportOpening}), then commits what the backends staged in one
 * transaction ({@link #commit}), or gives it up and has the backends remove it ({@link #abort}).
 *
 * <p>Crash note: an open import lives in this process's memory. If the Logic Module stops, the
 * import is over without a commit: backends asking {@link #state} hear UNKNOWN and remove what they
 * staged. A commit is durable with its transaction (which records the import as committed), so a
 * backend that missed FinishImport learns it from {@link #state}.
 */
public final class ImportCoordinator {
  /** An open import nobody touched this long (its client gone) is given up. */
  static final long IDLE_MS = 10 * 60_000;
  private static final Logger LOG = Logger.getLogger(ImportCoordinator.class.getName());

  /**
   * What BeginImport answers: the import's ID (empty after a dry run), what it creates, what of this
   * cluster's it names, and the allowances it needs ({@link ImportAllowance#flag} names).
   */
  public record Opened(String id, List<String> accountsToCreate, List<String> modelsToRegister,
      List<String> existingAccounts, List<String> existingDatasets, List<String> needs) {}

  /** What an import's state is, as backends ask. */
  public enum State { UNKNOWN, OPEN, COMMITTED }

  private final MetadataStore store;
  private final BackendRegistry backends;
  private final ModelRegistrar models;
  private final Supplier<SnapshotCalls> calls;
  private final Supplier<String> systemToken;
  private final Runnable accessChanged;
  private final Clock clock;
  // guarded by this
  private Open current;

  /** Imports into {@code store}, calling backends through {@code calls}. */
  public ImportCoordinator(MetadataStore store, BackendRegistry backends, ModelRegistrar models, Supplier<SnapshotCalls> calls,
      Supplier<String> systemToken, Runnable accessChanged, Clock clock) {
    this.store = store;
    this.backends = backends;
    this.models = models;
    this.calls = calls;
    this.systemToken = systemToken;
    this.accessChanged = accessChanged;
    this.clock = clock;
  }

  /** Starts checking a new import's plan (administrators); feed it the parts, then {@link ImportOpening#open}. */
  public ImportOpening begin(CallerSession caller) {
    caller.requireAdmin("BeginImport");
    return new ImportOpening(this, store, backends, models, caller.username());
  }

  /**
   * Opens a checked import, unless another one is open.
   *
   * @throws BackendUnavailableException when another import is open
   */
  void open(String id, String admin, ImportPlan plan, List<ModelRecord> toRegister, List<String> create) {
    expireIdle();
    synchronized (this) {
      if (current != null) {
        throw new BackendUnavailableException("another import (" + current.id + ", by " + current.admin
            + ") is open; try again when it ends");
      }
      current = new Open(id, admin, plan, List.copyOf(toRegister), create, clock.millis());
    }
  }

  /**
   * Registers everything the import's target backends staged, in one transaction, and tells them
   * to keep it; or, when anything fails, nothing, and the backends remove what they staged.
   */
  public ImportTables.Committed commit(CallerSession caller, String id) {
    caller.requireAdmin("CommitImport");
    Open imp = requireOpen(id);
    synchronized (imp) {
      if (imp.committing) {
        throw new InvalidArgumentException("import_id: import " + id + " is already being committed");
      }
      imp.committing = true;
    }
    String token = systemToken.get();
    ImportTables.Committed done;
    try {
      for (String target : imp.plan.stagingTargets()) {
        BackendRecord b = live(target);
        calls.get().prepareImport(b, id, token, batch -> store.imports().stageCopies(id, target, batch));
      }
      // Crash note: the transaction below records the import as committed with everything it
      // registers; before it commits, a crash leaves nothing registered and the backends remove the objects.
      done = store.imports().commit(id, imp.content(), clock.millis());
    } catch (RuntimeException e) {
      LOG.warning("import " + id + " failed while committing, nothing registered: " + e.getMessage());
      giveUp(imp, token);
      throw e;
    }
    synchronized (this) {
      current = null;
    }
    finishOn(imp, true, token);
    done.models().forEach(models::deploy);
    if (done.datasets() > 0 || done.contracts() > 0 || !done.accountsCreated().isEmpty()) {
      accessChanged.run();
    }
    LOG.info("import " + id + " committed: " + done.objects() + " objects, " + done.replicas() + " replicas, "
        + done.aliases() + " aliases (from " + imp.plan.source() + ")");
    return done;
  }

  /** Gives import {@code id} up (administrators): its backends remove what they staged. */
  public void abort(CallerSession caller, String id) {
    caller.requireAdmin("AbortImport");
    Open imp = requireOpen(id);
    if (imp.committing) {
      throw new InvalidArgumentException("import_id: import " + id + " is being committed");
    }
    giveUp(imp, systemToken.get());
  }

  /**
   * Whether import {@code id} is open, committed, or neither (backends, settling what they staged,
   * and administrators: an administrator's question also says the import's client is still there).
   */
  public State state(CallerSession caller, String id) {
    if (!caller.backend() && !caller.admin()) {
      throw new PermissionDeniedException("GetImportState is for backends and administrators");
    }
    checkId(id);
    expireIdle();
    synchronized (this) {
      if (current != null && current.id.equals(id)) {
        if (!caller.backend()) {
          current.touched = clock.millis();
        }
        return State.OPEN;
      }
    }
    return store.imports().committed(id) ? State.COMMITTED : State.UNKNOWN;
  }

  private void expireIdle() {
    Open idle;
    synchronized (this) {
      idle = current != null && !current.committing && clock.millis() - current.touched > IDLE_MS ? current : null;
    }
    if (idle != null) {
      LOG.warning("import " + idle.id + " was left idle for " + IDLE_MS / 60_000 + " min: given up");
      giveUp(idle, systemToken.get());
    }
  }

  private void giveUp(Open imp, String token) {
    synchronized (this) {
      if (current == imp) {
        current = null;
      }
    }
    finishOn(imp, false, token);
    store.imports().drop(imp.id);
  }

  private void finishOn(Open imp, boolean committed, String token) {
    for (String target : imp.plan.stagingTargets()) {
      Optional<BackendRecord> b = backends.alive().stream().filter(x -> x.id().equals(target)).findFirst();
      try {
        if (b.isEmpty()) {
          throw new BackendUnavailableException("not alive");
        }
        calls.get().finishImport(b.get(), imp.id, committed, token);
      } catch (DataClayException e) {
        LOG.warning("backend " + target + " did not hear that import " + imp.id + (committed ? " committed" : " ended")
            + " (it asks by itself): " + e.getMessage());
      }
    }
  }

  private synchronized Open requireOpen(String id) {
    checkId(id);
    if (current == null || !current.id.equals(id)) {
      throw new InvalidArgumentException("import_id: no import " + id + " is open (it committed, was given up, or"
          + " the Logic Module restarted)");
    }
    current.touched = clock.millis();
    return current;
  }

  private BackendRecord live(String backendId) {
    return backends.alive().stream().filter(b -> b.id().equals(backendId)).findFirst().orElseThrow(
        () -> new BackendUnavailableException("backend " + backendId + " of the import is not alive"));
  }

  private static void checkId(String id) {
    if (id == null || !id.matches("[0-9a-f]{32}")) {
      throw new InvalidArgumentException("import_id must be 32 lower-case hex digits");
    }
  }

  /** An open import. */
  private final class Open {
    final String id;
    final String admin;
    final ImportPlan plan;
    final List<ModelRecord> models;
    final List<String> accountsToCreate;
    volatile long touched;
    boolean committing;

    Open(String id, String admin, ImportPlan plan, List<ModelRecord> models, List<String> accountsToCreate,
        long touched) {
      this.id = id;
      this.admin = admin;
      this.plan = plan;
      this.models = models;
      this.accountsToCreate = accountsToCreate;
      this.touched = touched;
    }

    ImportTables.Content content() {
      List<AccountRecord> accounts = new ArrayList<>();
      for (ImportPlan.Account a : plan.accounts()) {
        if (!accountsToCreate.contains(a.username())) {
          continue;
        }
        if (a.hasHash()) {
          accounts.add(new AccountRecord(a.username(), a.passwordHash(), a.passwordSalt(), a.passwordIterations(),
              a.admin(), a.mayRegisterModels()));
        } else {
          AccountRecord fresh = Passwords.newAccount(a.username(), a.newPassword(), a.admin());
          accounts.add(new AccountRecord(fresh.username(), fresh.passwordHash(), fresh.passwordSalt(),
              fresh.passwordIterations(), fresh.admin(), a.mayRegisterModels()));
        }
      }
      Set<ImportAllowance> allowed = plan.allowed();
      ImportTables.MayTouch touch = new ImportTables.MayTouch(allowed.contains(ImportAllowance.EXISTING_ACCOUNTS),
          allowed.contains(ImportAllowance.CONTRACTS_ON_EXISTING_DATASETS),
          allowed.contains(ImportAllowance.OBJECTS_IN_EXISTING_DATASETS));
      return new ImportTables.Content(accounts, plan.datasets(), plan.contracts(), models, plan.targets(), touch);
    }
  }
}
