package io.dataclay.ds.deployment;

import io.dataclay.common.Language;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.models.ModelBundle.ModelFile;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.models.ModelCatalog;
import io.dataclay.ds.models.ModelRegistry;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Installs, withdraws and removes models on this backend, as the Logic Module says: writes Python
 * model files into the Python environment's import path (and deletes them again), records who owns
 * and may use each model ({@link ModelRegistry}), forwards installed models to the environments and
 * tells them to stop running withdrawn or removed ones. Changes older than what is installed are
 * skipped.
 */
public final class ModelService {
  private static final Logger LOG = Logger.getLogger(ModelService.class.getName());

  private final ModelFiles pythonFiles;
  private final ModelRegistry registry;
  private final Environments environments;

  /** Installs Python files through {@code pythonFiles}. */
  public ModelService(ModelFiles pythonFiles, ModelRegistry registry, Environments environments) {
    this.pythonFiles = pythonFiles;
    this.registry = registry;
    this.environments = environments;
  }

  /**
   * Installs or withdraws models sent by the Logic Module (a backend session); every path is
   * checked before any file is written, so a bad bundle changes nothing.
   */
  public void deploy(Session session, List<ModelBundle> models) {
    Permissions.requireBackend(session, "DeployModels");
    install(models);
  }

  /**
   * Removes models the Logic Module removed at change {@code revision} (a backend session): their
   * classes are refused from now on, their files deleted, and environments that may have loaded
   * them restarted. A namespace that changed here after {@code revision} is left as it is.
   */
  public synchronized void remove(Session session, List<String> namespaces, long revision) {
    Permissions.requireBackend(session, "RemoveModels");
    forget(namespaces, revision);
    registry.synced(revision, false);
  }

  /**
   * Installs models (same checks as {@link #deploy}): a withdrawn one has its files deleted, its
   * classes refused, and the environments that may have loaded it restarted.
   */
  public synchronized void install(List<ModelBundle> models) {
    List<List<Path>> targets = new ArrayList<>(models.size());
    for (int m = 0; m < models.size(); m++) {
      ModelBundle bundle = models.get(m);
      List<Path> paths = new ArrayList<>(bundle.files().size());
      for (int f = 0; f < bundle.files().size(); f++) {
        paths.add(pythonFiles.target(bundle.files().get(f).path(), "models[" + m + "].files[" + f + "].path"));
      }
      targets.add(paths);
    }
    List<ModelBundle> installed = new ArrayList<>();
    Set<String> withdrawn = new LinkedHashSet<>();
    for (int m = 0; m < models.size(); m++) {
      ModelBundle bundle = models.get(m);
      if (!registry.accepts(bundle)) {
        continue;
      }
      if (bundle.language() == Language.PYTHON) {
        List<ModelFile> files = bundle.files();
        for (int f = 0; f < files.size(); f++) {
          pythonFiles.write(targets.get(m).get(f), files.get(f).content());
        }
      }
      boolean wasLoaded = registry.loaded(bundle.namespace());
      delete(registry.record(bundle));
      registry.synced(bundle.revision(), false);
      if (!bundle.withdrawn()) {
        installed.add(bundle);
      } else if (wasLoaded) {
        withdrawn.add(bundle.namespace());
        LOG.info("withdrew model " + bundle.namespace() + " of " + bundle.owner() + ": its owner may no longer"
            + " register models");
      }
    }
    forward(Language.PYTHON, installed);
    forward(Language.JAVA, installed);
    if (!withdrawn.isEmpty()) {
      environments.withdraw(withdrawn);
    }
  }

  /**
   * Brings this backend to the Logic Module's list (at start, and when it may have missed a
   * change): installs what is newer, removes what the list no longer has, and deletes model files
   * that no installed model holds (left by models removed while this backend was down). A model
   * that cannot be installed is logged and skipped.
   */
  public synchronized void reconcile(ModelCatalog catalog) {
    Set<String> listed = new HashSet<>();
    for (ModelBundle bundle : catalog.models()) {
      listed.add(bundle.namespace());
      try {
        install(List.of(bundle));
      } catch (RuntimeException e) {
        LOG.warning("could not install model " + bundle.namespace() + ": " + e.getMessage());
      }
    }
    forget(registry.missingFrom(listed, catalog.revision()), catalog.revision());
    Set<Path> keep = new HashSet<>();
    for (String path : registry.pythonPaths()) {
      keep.add(pythonFiles.target(path, "an installed model's path"));
    }
    List<String> stale = pythonFiles.retainOnly(keep);
    if (!stale.isEmpty()) {
      LOG.info("deleted model files no installed model holds: " + stale);
    }
    registry.synced(catalog.revision(), true);
  }

  private void forget(List<String> namespaces, long revision) {
    Set<String> gone = new LinkedHashSet<>();
    for (String namespace : namespaces) {
      boolean wasKnown = registry.knows(namespace);
      boolean wasLoaded = registry.loaded(namespace);
      registry.forget(namespace, revision).ifPresent(paths -> {
        delete(paths);
        if (wasLoaded) {
          gone.add(namespace);
        }
        if (wasKnown) {
          LOG.info("removed model " + namespace);
        }
      });
    }
    if (!gone.isEmpty()) {
      environments.withdraw(gone);
    }
  }

  private void delete(List<String> pythonPaths) {
    for (String path : pythonPaths) {
      pythonFiles.delete(pythonFiles.target(path, "a model's path"));
    }
  }

  private void forward(Language language, List<ModelBundle> installed) {
    List<ModelBundle> ofLanguage = installed.stream().filter(b -> b.language() == language).toList();
    ExecutionEnvironment env = environments.find(language);
    if (env != null && !ofLanguage.isEmpty()) {
      env.deploy(ofLanguage);
    }
  }
}
