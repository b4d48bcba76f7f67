package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.exceptions.MethodDoesNotExistException;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The instance methods a model class can run remotely, by name and JVM descriptor
 * ("add(I)V", what enhanced classes send) and by plain name when that name is not overloaded.
 */
final class MethodTable {
  private static final ClassValue<Map<String, Method>> TABLES = new ClassValue<>() {
    @Override
    protected Map<String, Method> computeValue(Class<?> type) {
      return scan(type);
    }
  };

  private MethodTable() {}

  /** The JVM-descriptor key of a method: name + descriptor. */
  static String key(Method m) {
    return m.getName() + MethodType.methodType(m.getReturnType(), m.getParameterTypes()).toMethodDescriptorString();
  }

  /**
   * The method {@code name} names on {@code type}.
   *
   * @throws MethodDoesNotExistException when there is none (or a plain name is overloaded)
   */
  static Method find(Class<?> type, String name) {
    Method m = TABLES.get(type).get(name);
    if (m == null) {
      throw new MethodDoesNotExistException("class " + type.getName() + " has no method " + name
          + (name.indexOf('(') < 0 ? " (or it is overloaded: name it with its descriptor, e.g. add(I)V)" : ""));
    }
    return m;
  }

  private static Map<String, Method> scan(Class<?> type) {
    Map<String, Method> out = new HashMap<>();
    Map<String, Integer> plainCount = new HashMap<>();
    Set<String> seen = new HashSet<>();
    for (Class<?> c = type; c != null && c != Object.class && c != DataClayObject.class; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        int mod = m.getModifiers();
        if (Modifier.isStatic(mod) || Modifier.isPrivate(mod) || m.isSynthetic() || m.isBridge()) {
          continue;
        }
        String key = key(m);
        if (!seen.add(key)) {
          continue; // overridden: the subclass's method was met first
        }
        m.setAccessible(true);
        out.put(key, m);
        plainCount.merge(m.getName(), 1, Integer::sum);
        out.putIfAbsent("#" + m.getName(), m);
      }
    }
    Map<String, Method> table = new HashMap<>();
    for (Map.Entry<String, Method> e : out.entrySet()) {
      if (e.getKey().startsWith("#")) {
        String plain = e.getKey().substring(1);
        if (plainCount.get(plain) == 1) {
          table.put(plain, e.getValue());
        }
      } else {
        table.put(e.getKey(), e.getValue());
      }
    }
    return Map.copyOf(table);
  }
}
