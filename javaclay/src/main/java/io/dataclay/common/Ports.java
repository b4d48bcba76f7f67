package io.dataclay.common;

/** The port defaults every Java component shares (pyclay has its own copy of the same figure). */
public final class Ports {
  /** Where the Logic Module listens, and where clients and Data Services look for it, when DATACLAY_PORT is unset. */
  public static final int LOGIC_MODULE = 11034;

  private Ports() {}
}
