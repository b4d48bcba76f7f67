package io.dataclay.logic.models;

import io.dataclay.common.Language;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ModelStore;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Registered models: namespace ownership, one namespace per file and class, versions, who may use
 * and read them (owner, administrators, everyone once published), withdrawal, removal, deployment.
 */
public final class ModelRegistrar {
  private static final Logger LOG = Logger.getLogger(ModelRegistrar.class.getName());
  // each DeployModels call has a 30 s deadline; a backend slower than this is left to fetch the model
  private static final Duration DEPLOY_WAIT = Duration.ofSeconds(30);
  private static final int MAX_TYPE = 1024;
  private static final int MAX_SIGNATURE = 4096;

  private final MetadataStore store;
  private final AccountService accounts;
  private final BackendRegistry backends;
  private final BackendCalls deployer;
  private final Supplier<String> systemToken;
  private final long maxModelBytes;
  private final AtomicLong revision;

  /** Models in {@code store}, deployed through {@code deployer} in the session {@code systemToken} gives. */
  public ModelRegistrar(MetadataStore store, AccountService accounts, BackendRegistry backends, BackendCalls deployer,
      Supplier<String> systemToken, long maxModelBytes) {
    this.store = store;
    this.accounts = accounts;
    this.maxModelBytes = maxModelBytes;
    this.backends = backends;
    this.deployer = deployer;
    this.systemToken = systemToken;
    this.revision = new AtomicLong(store.models().revision());
  }

  /**
   * Stores the model as the next version of its namespace, owned by the caller (an administrator
   * or an account allowed to register models may claim a free namespace; only its owner replaces
   * it), and deploys it to every live backend: when this returns, each of them has installed it
   * or, if it did not answer in time, fetches it before it refuses one of its classes. The model's
   * own owner, version and publication are ignored: the Logic Module sets them (a new model of an
   * administrator starts published, anyone else's unpublished; a new version keeps what was decided).
   */
  public ModelRecord register(CallerSession caller, ModelRecord model) {
    accounts.requireModelRegistration(caller);
    check(model);
    ModelRecord stored = store.models().register(model.withOwnerAndVersion(caller.username(), 0)
        .withPublished(caller.admin()));
    deploy(stored);
    return stored;
  }

  /**
   * The model of a namespace, when the caller may read it (see {@link ModelRecord#readableBy});
   * one it may not read is answered as one that does not exist.
   */
  public ModelRecord get(CallerSession caller, String namespace) {
    Checks.name("namespace", namespace);
    return readable(caller, namespace).map(m -> forCaller(caller, m)).orElseThrow(() -> notRegistered(namespace));
  }

  /**
   * The models of a language (null: all) the caller may read, by namespace; backends get every
   * model (a withdrawn one without its files) and, when they ask for all languages, the last model
   * change the list includes (else 0).
   */
  public ModelStore.Catalog list(CallerSession caller, Language language) {
    if (caller.backend()) {
      ModelStore.Catalog all = store.models().catalog();
      noteRevision(all.revision());
      List<ModelRecord> sent = all.models().stream().filter(m -> language == null || m.language() == language)
          .map(ModelRegistrar::asSentToBackends).toList();
      return new ModelStore.Catalog(sent, language == null ? all.revision() : 0);
    }
    return new ModelStore.Catalog(store.models().list(language).stream()
        .filter(m -> m.readableBy(caller.username(), caller.admin())).map(m -> forCaller(caller, m)).toList(), 0);
  }

  /**
   * Publishes a model (every account may use it) or takes publication back (only its owner and
   * administrators may); the backends apply it before this returns, or at their next heartbeat.
   * Its owner or an administrator only.
   */
  public ModelRecord setPublished(CallerSession caller, String namespace, boolean published) {
    Checks.name("namespace", namespace);
    requireOwnerOrAdmin(caller, namespace, published ? "publish" : "unpublish");
    ModelRecord changed = store.models().setPublished(namespace, published).orElseThrow(() -> notRegistered(namespace));
    deploy(changed);
    return changed;
  }

  /**
   * Removes a model and its code from every backend, freeing its namespace; refused (nothing
   * changed) while objects of its classes are registered, unless {@code force}. Its owner or an
   * administrator only. Objects made persistent on a backend between the count and the moment that
   * backend hears of the removal stay, as a forced removal leaves them.
   *
   * @return the objects of its classes left behind (0 unless forced)
   * @throws NamespaceConflictException when objects of its classes exist and {@code force} is false
   */
  public long remove(CallerSession caller, String namespace, boolean force) {
    Checks.name("namespace", namespace);
    requireOwnerOrAdmin(caller, namespace, "remove");
    ModelStore.Removal removal = store.models().remove(namespace, force).orElseThrow(() -> notRegistered(namespace));
    if (!removal.removed()) {
      throw new NamespaceConflictException("model '" + namespace + "' still has " + removal.objects()
          + " object(s) of its classes: delete them first, or run RemoveModel with --force to remove the model"
          + " anyway (those objects stay, unusable until a model with their classes is registered again)");
    }
    noteRevision(removal.revision());
    List<BackendRecord> missed = deployer.removeModels(backends.alive(), List.of(namespace), removal.revision(),
        systemToken.get(), DEPLOY_WAIT);
    if (!missed.isEmpty()) {
      LOG.warning("removal of model '" + namespace + "' is not confirmed by " + names(missed)
          + "; they learn of it at their next heartbeat");
    }
    return removal.objects();
  }

  /**
   * Gives an account the right to register models, or takes it back (administrators only). Taking
   * it back withdraws every model the account owns, published or not: the backends delete their
   * code, refuse their classes and restart the environments that may have loaded it; giving it
   * again restores them.
   */
  public void setRegistrationRight(CallerSession caller, String username, boolean allowed) {
    accounts.setModelRegistration(caller, username, allowed);
    for (ModelRecord m : store.models().ownedBy(username)) {
      deploy(m);
    }
  }

  /** The last model change this Logic Module made or read (backends compare it with what they installed). */
  public long revision() {
    return revision.get();
  }

  /** Checks a model as registration does (names, paths, members, size); an import checks its models so. */
  public void check(ModelRecord model) {
    validate(model);
    long bytes = model.files().stream().mapToLong(f -> f.content().length).sum();
    if (bytes > maxModelBytes) {
      throw Checks.invalid("files", "the model's files hold " + bytes + " bytes, more than the "
          + maxModelBytes + " a model may hold (DATACLAY_MODEL_MAX_BYTES on the Logic Module)");
    }
  }

  /**
   * Sends a model's current state (its code, or its withdrawal) to every live backend, as
   * registration does; an import deploys the models it stored so.
   */
  public void deploy(ModelRecord stored) {
    noteRevision(stored.revision());
    List<BackendRecord> missed = deployer.deploy(backends.alive(), asSentToBackends(stored), systemToken.get(),
        DEPLOY_WAIT);
    if (!missed.isEmpty()) {
      LOG.warning("model '" + stored.namespace() + "' v" + stored.version() + " (revision " + stored.revision()
          + ") is not confirmed installed on " + names(missed)
          + "; they fetch it from ListModels at their next heartbeat or when they meet one of its classes");
    }
  }

  private Optional<ModelRecord> readable(CallerSession caller, String namespace) {
    return store.models().find(namespace)
        .filter(m -> caller.backend() || m.readableBy(caller.username(), caller.admin()));
  }

  // Who may not read a model learns nothing more than for a namespace nobody registered.
  private void requireOwnerOrAdmin(CallerSession caller, String namespace, String what) {
    if (caller.backend()) {
      throw new PermissionDeniedException("a backend session may not " + what + " models");
    }
    ModelRecord m = readable(caller, namespace).orElseThrow(() -> notRegistered(namespace));
    if (!caller.admin() && !m.owner().equals(caller.username())) {
      throw new PermissionDeniedException("only the owner of model '" + namespace + "' ('" + m.owner()
          + "') or an administrator may " + what + " it; '" + caller.username() + "' is neither");
    }
  }

  private static ClassNotRegisteredException notRegistered(String namespace) {
    return new ClassNotRegisteredException("namespace: no model is registered under '" + namespace + "'");
  }

  // The global revision counts every model change, so users are not told it: it would show when
  // models they cannot read change.
  private static ModelRecord forCaller(CallerSession caller, ModelRecord m) {
    return caller.backend() ? m : new ModelRecord(m.namespace(), m.language(), m.owner(), m.version(), m.files(),
        m.classes(), m.published(), m.withdrawn(), 0);
  }

  private static ModelRecord asSentToBackends(ModelRecord m) {
    return m.withdrawn() ? m.withoutFiles() : m;
  }

  private void noteRevision(long seen) {
    revision.accumulateAndGet(seen, Math::max);
  }

  private static List<String> names(List<BackendRecord> backends) {
    return backends.stream().map(b -> b.name() + " (" + b.id() + ")").toList();
  }

  private static void validate(ModelRecord model) {
    Checks.name("namespace", model.namespace());
    if (model.files().isEmpty()) {
      throw Checks.invalid("files", "a model needs at least one file");
    }
    Set<String> paths = new HashSet<>();
    for (int i = 0; i < model.files().size(); i++) {
      String path = Checks.relativePath("files[" + i + "].path", model.files().get(i).path());
      if (!paths.add(path)) {
        throw Checks.invalid("files[" + i + "].path", "'" + path + "' appears twice");
      }
      if (model.language() == Language.PYTHON && inClientLibrary(path.replace('/', '.'))) {
        throw Checks.invalid("files[" + i + "].path", "'" + path + "' is in the client library's own package,"
            + " which backends never load from a model: use a package of the model's own (or, for dataClay 4's"
            + " contributed models, dataclay/contrib/<name>/)");
      }
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < model.classes().size(); i++) {
      ModelRecord.ClassInfo k = model.classes().get(i);
      String at = "classes[" + i + "]";
      if (!names.add(Checks.className(at + ".name", k.name()))) {
        throw Checks.invalid(at + ".name", "'" + k.name() + "' appears twice");
      }
      if (model.language() == Language.PYTHON && inClientLibrary(k.name())) {
        throw Checks.invalid(at + ".name", "'" + k.name() + "' is in the client library's own package, which"
            + " backends never load from a model: use a package of the model's own (or dataclay.contrib.<name>)");
      }
      checkMembers(at + ".fields", k.fields(), "type", MAX_TYPE, true);
      // methods may repeat a name: Java overloads differ by signature only
      checkMembers(at + ".methods", k.methods(), "signature", MAX_SIGNATURE, false);
    }
  }

  /**
   * Whether a dotted Python name ("dataclay.x.Y", or a file path with dots) falls in the client library's
   * own packages, dataclay and storage, outside dataClay 4's place for contributed models,
   * dataclay.contrib.&lt;name&gt;.
   */
  static boolean inClientLibrary(String dotted) {
    String[] parts = dotted.split("\\.");
    if (!parts[0].equals("dataclay") && !parts[0].equals("storage")) {
      return false;
    }
    return !(parts[0].equals("dataclay") && parts.length > 3 && parts[1].equals("contrib")
        && !parts[2].equals("__init__"));
  }

  private static void checkMembers(String at, List<ModelRecord.Member> members, String detail, int maxDetail,
      boolean uniqueNames) {
    Set<String> seen = new HashSet<>();
    for (int j = 0; j < members.size(); j++) {
      ModelRecord.Member m = members.get(j);
      if (!seen.add(Checks.identifier(at + "[" + j + "].name", m.name())) && uniqueNames) {
        throw Checks.invalid(at + "[" + j + "].name", "'" + m.name() + "' appears twice");
      }
      Checks.text(at + "[" + j + "]." + detail, m.detail(), maxDetail);
    }
  }
}
