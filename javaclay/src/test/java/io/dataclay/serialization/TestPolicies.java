package io.dataclay.serialization;

import java.util.Set;

/** Codecs whose model classes are a fixed set of test classes. */
final class TestPolicies {
  private TestPolicies() {}

  static ObjectCodec codec(Set<Class<?>> models, AllowList extra) {
    ModelClasses classes = new ModelClasses() {
      @Override
      public Class<?> find(String name) {
        return models.stream().filter(c -> c.getName().equals(name)).findFirst().orElse(null);
      }

      @Override
      public boolean contains(Class<?> type) {
        return models.contains(type);
      }
    };
    return new ObjectCodec(new ModelClassPolicy(classes, extra, TestPolicies.class.getClassLoader()));
  }

  static ObjectCodec codec() {
    return codec(Set.of(Person.class), AllowList.none());
  }
}
