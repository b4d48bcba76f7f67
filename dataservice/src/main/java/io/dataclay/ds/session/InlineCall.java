package io.dataclay.ds.session;

import io.dataclay.common.CallScoped;

/**
 * A call served inline on a network (event-loop) thread, without an executor hop: the session
 * resolved for it before it started, and the rule that nothing on such a thread may block (no
 * Logic Module call, no write that could wait). Code that could block asks {@link #active()} and
 * hands its work to a pool instead.
 */
public final class InlineCall {
  private static final CallScoped<Session> SESSION = new CallScoped<>();

  private InlineCall() {}

  /** Runs {@code work} on this thread as part of an inline call of {@code session}. */
  public static void run(Session session, Runnable work) {
    SESSION.run(session, work);
  }

  /** Whether the current thread serves an inline call (and so must not block). */
  public static boolean active() {
    return SESSION.get() != null;
  }

  /** The session of the inline call served on this thread, or null when none is. */
  public static Session session() {
    return SESSION.get();
  }
}
