package io.dataclay.enhance;

import io.dataclay.api.RemoteFields;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/** Wraps a generated field writer: on a proxy the field is assigned in the backend instead. */
public final class FieldWriteAdvice {
  private FieldWriteAdvice() {}

  /** Assigns the field remotely when {@code self} is a proxy; true skips the local assignment. */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static boolean enter(@Advice.This Object self, @Advice.Origin("#m") String accessor,
      @Advice.Argument(value = 0, typing = Assigner.Typing.DYNAMIC) Object value) {
    return RemoteFields.onWrite(self, accessor, value);
  }
}
