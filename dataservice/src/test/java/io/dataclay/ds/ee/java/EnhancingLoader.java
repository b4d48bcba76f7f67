package io.dataclay.ds.ee.java;

import io.dataclay.enhance.ModelEnhancer;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import net.bytebuddy.dynamic.ClassFileLocator;

/**
 * Loads some test model classes enhanced (what the byte-buddy-maven-plugin does at build time),
 * child-first, so that the client tests run the enhanced classes a real client would.
 */
final class EnhancingLoader extends ClassLoader {
  private final Map<String, byte[]> classFiles = new HashMap<>();

  EnhancingLoader(Set<Class<?>> models) {
    super("enhanced-test-models", EnhancingLoader.class.getClassLoader());
    for (Class<?> c : models) {
      classFiles.put(c.getName(), JavaModels.classFile(c));
    }
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!classFiles.containsKey(name)) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        byte[] enhanced = ModelEnhancer.enhance(name, classFiles.get(name), new ClassFileLocator.Simple(classFiles));
        c = defineClass(name, enhanced, 0, enhanced.length);
      }
      return c;
    }
  }
}
