package io.dataclay.logic.accounts;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What backends must stop trusting, in order: sessions closed (by token hash) and access changes
 * (data contracts granted or revoked: every cached session may be stale). Each event is numbered;
 * a backend's heartbeat asks for the events after the last number it saw. Kept in memory only: a
 * backend whose view is older than what is kept, or from before a restart (another epoch), is told
 * to forget every session it cached.
 */
public final class SessionRevocations {
  private static final int KEEP = 10_000;
  private static final String FORGET_ALL = "";

  /** The events after a backend's last view: closed token hashes, or forget every cached session. */
  public record Since(long epoch, long seen, List<String> closedTokenSha256, boolean forgetAll) {}

  private record Event(long number, String tokenSha256) {}

  private final long epoch = new SecureRandom().nextLong() & Long.MAX_VALUE;
  private final ArrayDeque<Event> events = new ArrayDeque<>();
  private long last;

  /** Records a closed session. */
  public synchronized void closed(String tokenSha256) {
    add(tokenSha256);
  }

  /** Records that any session's access may have changed. */
  public synchronized void accessChanged() {
    add(FORGET_ALL);
  }

  private void add(String tokenSha256) {
    events.addLast(new Event(++last, tokenSha256));
    if (events.size() > KEEP) {
      events.removeFirst();
    }
  }

  /** The events after number {@code seen} of epoch {@code seenEpoch}. */
  public synchronized Since since(long seenEpoch, long seen) {
    long oldest = events.isEmpty() ? last + 1 : events.peekFirst().number();
    if (seenEpoch != epoch || seen > last || seen < oldest - 1) {
      return new Since(epoch, last, List.of(), true);
    }
    List<String> closed = new ArrayList<>();
    for (Event e : events) {
      if (e.number() <= seen) {
        continue;
      }
      if (e.tokenSha256().equals(FORGET_ALL)) {
        return new Since(epoch, last, List.of(), true);
      }
      closed.add(e.tokenSha256());
    }
    return new Since(epoch, last, closed, false);
  }
}
