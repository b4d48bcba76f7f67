package io.dataclay.logic.service;

import io.dataclay.common.Language;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.logging.Logger;

/** Registered models: namespace ownership, one namespace per file and class, versions, deployment. */
public final class ModelService {
  private static final Logger LOG = Logger.getLogger(ModelService.class.getName());
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

  ModelService(MetadataStore store, AccountService accounts, BackendRegistry backends, BackendCalls deployer,
      Supplier<String> systemToken, long maxModelBytes) {
    this.store = store;
    this.accounts = accounts;
    this.maxModelBytes = maxModelBytes;
    this.backends = backends;
    this.deployer = deployer;
    this.systemToken = systemToken;
  }

  /**
   * Stores the model as the next version of its namespace, owned by the caller (an administrator
   * or an account allowed to register models may claim a free namespace; only its owner replaces
   * it), and deploys it to every live backend: when this returns, each of them has installed it
   * or, if it did not answer in time, fetches it before it refuses one of its classes. The model's
   * own owner and version are ignored: the Logic Module sets them.
   */
  public ModelRecord register(Session caller, ModelRecord model) {
    accounts.requireModelRegistration(caller);
    check(model);
    ModelRecord stored = store.models().register(model.withOwnerAndVersion(caller.username(), 0));
    deploy(stored);
    return stored;
  }

  /** The model of a namespace (any session). */
  public ModelRecord get(String namespace) {
    Checks.name("namespace", namespace);
    return store.models().find(namespace).orElseThrow(() -> new ClassNotRegisteredException(
        "namespace: no model is registered under '" + namespace + "'"));
  }

  /** Every model of a language (null: all), by namespace (any session). */
  public List<ModelRecord> list(Language language) {
    return store.models().list(language);
  }

  /** Checks a model as registration does (names, paths, members, size); an import checks its models so. */
  void check(ModelRecord model) {
    validate(model);
    long bytes = model.files().stream().mapToLong(f -> f.content().length).sum();
    if (bytes > maxModelBytes) {
      throw Checks.invalid("files", "the model's files hold " + bytes + " bytes, more than the "
          + maxModelBytes + " a model may hold (DATACLAY_MODEL_MAX_BYTES on the Logic Module)");
    }
  }

  /** Deploys a model stored by an import to every live backend, as registration does. */
  void deploy(ModelRecord stored) {
    List<BackendRecord> missed = deployer.deploy(backends.alive(), stored, systemToken.get(), DEPLOY_WAIT);
    if (!missed.isEmpty()) {
      LOG.warning("model '" + stored.namespace() + "' v" + stored.version() + " is not confirmed installed on "
          + missed.stream().map(b -> b.name() + " (" + b.id() + ")").toList()
          + "; they fetch it from ListModels when they meet one of its classes");
    }
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
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < model.classes().size(); i++) {
      ModelRecord.ClassInfo k = model.classes().get(i);
      String at = "classes[" + i + "]";
      if (!names.add(Checks.className(at + ".name", k.name()))) {
        throw Checks.invalid(at + ".name", "'" + k.name() + "' appears twice");
      }
      checkMembers(at + ".fields", k.fields(), "type", MAX_TYPE, true);
      // methods may repeat a name: Java overloads differ by signature only
      checkMembers(at + ".methods", k.methods(), "signature", MAX_SIGNATURE, false);
    }
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
