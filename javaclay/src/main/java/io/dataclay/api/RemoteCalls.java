package io.dataclay.api;

/**
 * The entry point enhanced model methods call first (see {@link io.dataclay.enhance.DataClayPlugin}):
 * on a proxy the call runs in the object's backend and the method body is skipped. Public only
 * because enhanced classes call it; not for model code.
 */
public final class RemoteCalls {
  private RemoteCalls() {}

  /** A remote call's result (possibly null), wrapped so that "ran remotely" is never null. */
  public record Result(Object value) {}

  /**
   * Null when {@code self} holds its state (the method body runs here); otherwise runs the method
   * in the backend and returns its result.
   */
  public static Result onEntry(Object self, String method, Object[] args) {
    if (!ObjectStates.isProxy(self)) {
      return null;
    }
    return new Result(Runtimes.current().callMethod((DataClayObject) self, method, args));
  }

  /** The value of a remote call's result. */
  public static Object value(Object result) {
    return ((Result) result).value();
  }
}
