package io.dataclay.ds.ee.java;

import io.dataclay.enhance.ModelEnhancer;
import java.util.Map;
import net.bytebuddy.dynamic.ClassFileLocator;

/**
 * Defines the classes of one deployed Java model (one namespace, one version). Its own classes are
 * loaded child-first, so a redeploy's loader never sees the previous version; everything else
 * (the JDK, the dataClay API) comes from the Data Service. Model classes that were not enhanced
 * at build time are enhanced as they are defined.
 */
final class ModelClassLoader extends ClassLoader {
  static {
    registerAsParallelCapable();
  }

  private final Map<String, byte[]> classFiles;
  private final ClassFileLocator locator;

  /** A loader for {@code classFiles} (binary name -> class file) of {@code namespace}. */
  ModelClassLoader(String namespace, Map<String, byte[]> classFiles, ClassLoader parent) {
    super("dataclay-model-" + namespace, parent);
    this.classFiles = Map.copyOf(classFiles);
    this.locator = new ClassFileLocator.Simple(this.classFiles);
  }

  /** The binary names of the classes this loader defines. */
  java.util.Set<String> classNames() {
    return classFiles.keySet();
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!classFiles.containsKey(name)) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        c = findClass(name);
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    byte[] bytes = classFiles.get(name);
    if (bytes == null) {
      throw new ClassNotFoundException(name);
    }
    byte[] enhanced;
    try {
      enhanced = ModelEnhancer.enhance(name, bytes, locator);
    } catch (RuntimeException e) {
      throw new ClassFormatError("the class file of " + name + " is not valid: " + e.getMessage());
    }
    return defineClass(name, enhanced, 0, enhanced.length);
  }
}
