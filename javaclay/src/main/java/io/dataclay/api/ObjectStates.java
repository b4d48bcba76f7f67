package io.dataclay.api;

/**
 * Reads and sets the persistence state of model objects. For the dataClay runtimes (the client's
 * and the backends' execution environment), not for model code.
 */
public final class ObjectStates {
  private ObjectStates() {}

  /** The object's state, or null while it is volatile (not persistent). */
  public static ObjectState of(DataClayObject obj) {
    return obj.dcState;
  }

  /** Sets the object's state (null makes it volatile again). */
  public static void set(DataClayObject obj, ObjectState state) {
    obj.dcState = state;
  }

  /** Whether calls on the object go to its backend. */
  public static boolean isProxy(Object obj) {
    if (obj instanceof DataClayObject d) {
      ObjectState s = d.dcState;
      return s != null && s.proxy();
    }
    return false;
  }
}
