package io.dataclay.serialization;

import io.dataclay.api.DataClayObject;
import io.dataclay.exceptions.MethodDoesNotExistException;
import io.dataclay.exceptions.SerializationException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The persistent fields of a model class: its non-static, non-transient fields and those of its
 * model superclasses (not DataClayObject's), by name, superclass fields first. A class that
 * declares a field with the same name as a superclass field is refused (the stored map is by name).
 */
public final class ModelFields {
  private static final ClassValue<Map<String, Field>> FIELDS = new ClassValue<>() {
    @Override
    protected Map<String, Field> computeValue(Class<?> type) {
      return scan(type);
    }
  };

  private ModelFields() {}

  /** The persistent fields of {@code type} by name, in declaration order; accessible. */
  public static Map<String, Field> of(Class<? extends DataClayObject> type) {
    return FIELDS.get(type);
  }

  /**
   * The persistent field {@code name} of {@code type}, accessible.
   *
   * @throws MethodDoesNotExistException when the class has no such persistent field
   */
  public static Field named(Class<? extends DataClayObject> type, String name) {
    Field f = of(type).get(name);
    if (f == null) {
      throw new MethodDoesNotExistException("class " + type.getName() + " has no persistent field '" + name + "'");
    }
    return f;
  }

  private static Map<String, Field> scan(Class<?> type) {
    List<Class<?>> chain = new ArrayList<>();
    for (Class<?> c = type; c != null && c != DataClayObject.class && c != Object.class; c = c.getSuperclass()) {
      chain.add(0, c);
    }
    Map<String, Field> out = new LinkedHashMap<>();
    for (Class<?> c : chain) {
      for (Field f : c.getDeclaredFields()) {
        int m = f.getModifiers();
        if (Modifier.isStatic(m) || Modifier.isTransient(m) || f.isSynthetic()) {
          continue;
        }
        Field previous = out.putIfAbsent(f.getName(), f);
        if (previous != null) {
          throw new SerializationException("model class " + type.getName() + " has two persistent fields named '"
              + f.getName() + "' (" + previous.getDeclaringClass().getName() + " and " + c.getName() + ")");
        }
        f.setAccessible(true);
      }
    }
    return Collections.unmodifiableMap(out);
  }
}
