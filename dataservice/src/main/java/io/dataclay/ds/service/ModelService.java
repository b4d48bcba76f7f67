package io.dataclay.ds.service;

import io.dataclay.common.Language;
import io.dataclay.ds.service.ModelBundle.ModelFile;
import io.dataclay.exceptions.PermissionDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Installs models on this backend: writes Python model files into the Python environment's
 * import path, remembers the registered classes (checked by make persistent), and forwards the
 * models to the Python environment. Bundles older than what is installed are skipped.
 */
public final class ModelService {
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
   * Installs models sent by the Logic Module (a backend session); every path is checked before
   * any file is written, so a bad bundle changes nothing.
   */
  public void deploy(Session session, List<ModelBundle> models) {
    Permissions.requireBackend(session, "DeployModels");
    install(models);
  }

  /** Installs models (at start, from the Logic Module's list); same checks as {@link #deploy}. */
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
    for (int m = 0; m < models.size(); m++) {
      ModelBundle bundle = models.get(m);
      if (!registry.isCurrentOrNewer(bundle)) {
        continue;
      }
      if (bundle.language() == Language.PYTHON) {
        List<ModelFile> files = bundle.files();
        for (int f = 0; f < files.size(); f++) {
          pythonFiles.write(targets.get(m).get(f), files.get(f).content());
        }
      }
      registry.record(bundle);
      installed.add(bundle);
    }
    forward(Language.PYTHON, installed);
    forward(Language.JAVA, installed);
  }

  private void forward(Language language, List<ModelBundle> installed) {
    List<ModelBundle> ofLanguage = installed.stream().filter(b -> b.language() == language).toList();
    ExecutionEnvironment env = environments.find(language);
    if (env != null && !ofLanguage.isEmpty()) {
      env.deploy(ofLanguage);
    }
  }
}
