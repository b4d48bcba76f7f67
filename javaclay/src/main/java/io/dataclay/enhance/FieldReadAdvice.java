package io.dataclay.enhance;

import io.dataclay.api.RemoteCalls;
import io.dataclay.api.RemoteFields;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/** Wraps a generated field reader: on a proxy the field is read in the backend instead. */
public final class FieldReadAdvice {
  private FieldReadAdvice() {}

  /** Reads the field remotely when {@code self} is a proxy; a non-null answer skips the local read. */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static Object enter(@Advice.This Object self, @Advice.Origin("#m") String accessor) {
    return RemoteFields.onRead(self, accessor);
  }

  /** Returns the remote value in place of the skipped local read. */
  @Advice.OnMethodExit
  public static void exit(@Advice.Enter Object remote,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned) {
    if (remote != null) {
      returned = RemoteCalls.value(remote);
    }
  }
}
