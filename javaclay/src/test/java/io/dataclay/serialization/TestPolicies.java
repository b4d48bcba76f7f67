package io.dataclay.serialization;

import java.util.Set;

/** Codecs whose model classes are a fixed set of test classes (also used by the Data Service's tests). */
public final class TestPolicies {
  private TestPolicies() {}

  /** Model classes that are exactly {@code models}. */
  public static ModelClasses fixed(Set<Class<?>> models) {
    return new ModelClasses() {
      @Override
      public Class<?> find(String name) {
        return models.stream().filter(c -> c.getName().equals(name)).findFirst().orElse(null);
      }

      @Override
      public boolean contains(Class<?> type) {
        return models.contains(type);
      }
    };
  }

  static ObjectCodec codec(Set<Class<?>> models, AllowList extra) {
    return new ObjectCodec(new ModelClassPolicy(fixed(models), extra, TestPolicies.class.getClassLoader()));
  }

  static ObjectCodec codec() {
    return codec(Set.of(Person.class), AllowList.none());
  }
}
