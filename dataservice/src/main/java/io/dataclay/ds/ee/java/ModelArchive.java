package io.dataclay.ds.ee.java;

import io.dataclay.ds.models.ModelBundle;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;

/**
 * The class files of a Java model bundle by binary name: ".class" files at their package path,
 * and the ".class" entries of ".jar" files; other files (resources, sources) are ignored.
 */
final class ModelArchive {
  private static final long MAX_CLASS_BYTES = 64L << 20;

  private ModelArchive() {}

  /** Binary class name -> class file bytes. */
  static Map<String, byte[]> classFiles(ModelBundle bundle) {
    Map<String, byte[]> out = new HashMap<>();
    for (int i = 0; i < bundle.files().size(); i++) {
      ModelBundle.ModelFile f = bundle.files().get(i);
      String where = "model " + bundle.namespace() + " files[" + i + "] (" + f.path() + ")";
      if (f.path().endsWith(".class")) {
        add(out, f.path(), f.content(), where);
      } else if (f.path().endsWith(".jar")) {
        readJar(out, f.content(), where);
      }
    }
    return out;
  }

  private static void readJar(Map<String, byte[]> out, byte[] jar, String where) {
    try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
      for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
        if (!e.isDirectory() && e.getName().endsWith(".class")) {
          byte[] bytes = in.readNBytes((int) MAX_CLASS_BYTES + 1);
          if (bytes.length > MAX_CLASS_BYTES) {
            throw new InvalidArgumentException(where + ": entry " + e.getName() + " is larger than 64 MiB");
          }
          add(out, e.getName(), bytes, where);
        }
      }
    } catch (IOException e) {
      throw new InvalidArgumentException(where + " is not a readable jar: " + e.getMessage());
    }
  }

  private static void add(Map<String, byte[]> out, String path, byte[] bytes, String where) {
    String name = path.substring(0, path.length() - ".class".length()).replace('/', '.');
    if (name.equals("module-info") || name.endsWith(".package-info")) {
      return;
    }
    if (out.put(name, bytes) != null) {
      throw new InvalidArgumentException(where + ": class " + name + " appears twice");
    }
  }
}
