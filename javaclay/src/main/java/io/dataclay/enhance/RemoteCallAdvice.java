package io.dataclay.enhance;

import io.dataclay.api.RemoteCalls;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * Inlined at the start and end of every enhanced model method: on a proxy the body is skipped and
 * the method returns what the backend answered (its exceptions propagate to the caller).
 */
public final class RemoteCallAdvice {
  private RemoteCallAdvice() {}

  /** Runs the call remotely when {@code self} is a proxy; a non-null answer skips the body. */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static Object enter(@Advice.This Object self, @Advice.Origin("#m#d") String method,
      @Advice.AllArguments Object[] args) {
    return RemoteCalls.onEntry(self, method, args);
  }

  /** Returns the remote result in place of the skipped body's. */
  @Advice.OnMethodExit
  public static void exit(@Advice.Enter Object remote,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned) {
    if (remote != null) {
      returned = RemoteCalls.value(remote);
    }
  }
}
