package io.dataclay.ds.session;

import java.util.Set;

/** Sessions for tests that call a service directly, without a Logic Module to validate tokens. */
public final class TestSessions {
  /** A backend of the cluster (what the Logic Module and other backends call with). */
  public static final Session BACKEND = new Session("b", "_dataclay_backends", "x", Set.of(), Set.of(), Long.MAX_VALUE,
      false, true, 0);
  /** The administrator. */
  public static final Session ADMIN = new Session("a", "admin", "admin", Set.of("admin"), Long.MAX_VALUE, true);
  /** An ordinary user, alice, with her own dataset only. */
  public static final Session USER = new Session("u", "alice", "alice", Set.of("alice"), Long.MAX_VALUE, false);

  private TestSessions() {}
}
