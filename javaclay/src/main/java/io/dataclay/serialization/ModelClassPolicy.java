package io.dataclay.serialization;

/**
 * The class allow-list of a codec: the safe JDK types, the model classes of one side, the names a
 * deployment added, and arrays and enums of those. A payload naming anything else is refused
 * before its class is loaded.
 *
 * @param models the model classes of one side
 * @param extra the names a deployment added
 * @param extraLoader the loader of the {@code extra} classes
 */
public record ModelClassPolicy(ModelClasses models, AllowList extra, ClassLoader extraLoader) implements ClassPolicy {
  @Override
  public boolean allows(Class<?> type) {
    while (type.isArray()) {
      type = type.getComponentType();
    }
    if (SafeTypes.contains(type) || models.contains(type) || extra.allows(type.getName())) {
      return true;
    }
    // an enum constant with a body is a subclass of its enum
    Class<?> enclosing = type.getSuperclass();
    return enclosing != null && enclosing.isEnum() && allows(enclosing);
  }

  @Override
  public Class<?> resolve(String name) {
    if (name.startsWith("[")) {
      return resolveArray(name);
    }
    Class<?> safe = SafeTypes.named(name);
    if (safe != null) {
      return safe;
    }
    if (extra.allows(name)) {
      try {
        return Class.forName(name, false, extraLoader);
      } catch (ClassNotFoundException | LinkageError e) {
        return null;
      }
    }
    return models.find(name);
  }

  private Class<?> resolveArray(String name) {
    int dims = 0;
    while (dims < name.length() && name.charAt(dims) == '[') {
      dims++;
    }
    String element = name.substring(dims);
    Class<?> component;
    if (element.length() == 1) {
      component = primitive(element.charAt(0));
    } else if (element.startsWith("L") && element.endsWith(";")) {
      component = resolve(element.substring(1, element.length() - 1));
    } else {
      component = null;
    }
    if (component == null || dims > 32) {
      return null;
    }
    for (int i = 0; i < dims; i++) {
      component = component.arrayType();
    }
    return component;
  }

  private static Class<?> primitive(char code) {
    return switch (code) {
      case 'Z' -> boolean.class;
      case 'B' -> byte.class;
      case 'C' -> char.class;
      case 'S' -> short.class;
      case 'I' -> int.class;
      case 'J' -> long.class;
      case 'F' -> float.class;
      case 'D' -> double.class;
      default -> null;
    };
  }
}
