package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.serialization.AllowList;
import io.dataclay.serialization.ModelClassPolicy;
import io.dataclay.serialization.ModelClasses;
import io.dataclay.serialization.ObjectCodec;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * One immutable set of deployed Java models: a class loader per namespace and the codec that
 * accepts exactly their classes (plus the safe JDK types and DATACLAY_JAVA_ALLOW). A deploy
 * builds the next set; calls already running finish with the set they started with.
 */
final class DeployedModels implements ModelClasses {
  private final Map<String, ModelClassLoader> byNamespace;
  private final Map<String, ModelClassLoader> byClass;
  private final ObjectCodec codec;

  private DeployedModels(Map<String, ModelClassLoader> byNamespace, AllowList extra) {
    this.byNamespace = Map.copyOf(byNamespace);
    Map<String, ModelClassLoader> classes = new HashMap<>();
    this.byClass = classes;
    this.codec = new ObjectCodec(new ModelClassPolicy(this, extra, DeployedModels.class.getClassLoader()));
    for (Map.Entry<String, ModelClassLoader> e : byNamespace.entrySet()) {
      e.getValue().classNames().forEach(n -> classes.put(n, e.getValue()));
    }
  }

  /** No models. */
  static DeployedModels empty(AllowList extra) {
    return new DeployedModels(Map.of(), extra);
  }

  /**
   * This set with {@code bundle} installed (replacing its namespace's previous version).
   *
   * @throws NamespaceConflictException when another namespace already defines one of its classes
   */
  DeployedModels with(ModelBundle bundle, AllowList extra) {
    Map<String, byte[]> files = ModelArchive.classFiles(bundle);
    for (String name : files.keySet()) {
      ModelClassLoader owner = byClass.get(name);
      if (owner != null && byNamespace.get(bundle.namespace()) != owner) {
        throw new NamespaceConflictException("Java class " + name + " of namespace " + bundle.namespace()
            + " is already defined by another namespace on this backend");
      }
    }
    Map<String, ModelClassLoader> next = new HashMap<>(byNamespace);
    next.put(bundle.namespace(), new ModelClassLoader(bundle.namespace(), files, DeployedModels.class.getClassLoader()));
    return new DeployedModels(next, extra);
  }

  /** This set without the models of {@code namespaces}. */
  DeployedModels without(Collection<String> namespaces, AllowList extra) {
    Map<String, ModelClassLoader> next = new HashMap<>(byNamespace);
    next.keySet().removeAll(namespaces);
    return new DeployedModels(next, extra);
  }

  /** The namespaces of this set. */
  java.util.Set<String> namespaces() {
    return byNamespace.keySet();
  }

  /** The codec of this set of models. */
  ObjectCodec codec() {
    return codec;
  }

  /**
   * The model class stored objects of {@code className} are instances of.
   *
   * @throws ClassNotRegisteredException when no deployed Java model defines it
   */
  Class<? extends DataClayObject> modelClass(String className) {
    Class<?> c = find(className);
    if (c == null || !DataClayObject.class.isAssignableFrom(c)) {
      throw new ClassNotRegisteredException("Java class " + className
          + " is not a DataClayObject class of any model deployed on this backend");
    }
    return c.asSubclass(DataClayObject.class);
  }

  @Override
  public Class<?> find(String name) {
    ModelClassLoader loader = byClass.get(name);
    if (loader == null) {
      return null;
    }
    try {
      return loader.loadClass(name);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new ClassNotRegisteredException("Java class " + name + " of a deployed model cannot be loaded: " + e);
    }
  }

  @Override
  public boolean contains(Class<?> type) {
    ModelClassLoader loader = byClass.get(type.getName());
    return loader != null && type.getClassLoader() == loader;
  }
}
