package io.dataclay.serialization;

/** The model classes one side knows: deployed model code in a backend, loadable model classes in a client. */
public interface ModelClasses {
  /** The model class with this binary name, or null when there is none (a refused name defines nothing). */
  Class<?> find(String name);

  /** Whether {@code type} is one of these model classes. */
  boolean contains(Class<?> type);
}
