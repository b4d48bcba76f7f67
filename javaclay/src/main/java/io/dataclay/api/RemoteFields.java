package io.dataclay.api;

/**
 * The entry point of the field accessors the build enhancement gives model classes (see
 * {@link io.dataclay.enhance.DataClayPlugin}): model code reading or assigning a persistent field
 * goes through them, and on a proxy the read or the assignment happens in the object's backend.
 * Public only because enhanced classes call it; not for model code.
 */
public final class RemoteFields {
  /** Prefix of the generated reader of a field ({@code $dc$get$name}). */
  public static final String READER_PREFIX = "$dc$get$";
  /** Prefix of the generated writer of a field ({@code $dc$set$name}). */
  public static final String WRITER_PREFIX = "$dc$set$";

  private RemoteFields() {}

  /**
   * Null when {@code self} holds its state (the field is read here); otherwise the field's value,
   * read in the backend. {@code accessor} is the generated reader's name.
   */
  public static RemoteCalls.Result onRead(Object self, String accessor) {
    if (!ObjectStates.isProxy(self)) {
      return null;
    }
    String field = accessor.substring(READER_PREFIX.length());
    return new RemoteCalls.Result(Runtimes.current().getField((DataClayObject) self, field));
  }

  /**
   * False when {@code self} holds its state (the field is assigned here); otherwise assigns it in
   * the backend and returns true. {@code accessor} is the generated writer's name.
   */
  public static boolean onWrite(Object self, String accessor, Object value) {
    if (!ObjectStates.isProxy(self)) {
      return false;
    }
    Runtimes.current().setField((DataClayObject) self, accessor.substring(WRITER_PREFIX.length()), value);
    return true;
  }
}
