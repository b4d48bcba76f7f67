package io.dataclay.common;

/** Language of a class, an object or an execution environment. */
public enum Language {
  PYTHON,
  JAVA
}
