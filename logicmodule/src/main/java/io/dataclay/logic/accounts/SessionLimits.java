package io.dataclay.logic.accounts;

/**
 * Per-account session limits: {@code maxOpen} open sessions at once, {@code perSecond} new ones a
 * second on average with bursts of {@code burst}.
 */
public record SessionLimits(long maxOpen, double perSecond, long burst) {
  /** 500 open sessions, 20 new a second, bursts of 200. */
  public static final SessionLimits DEFAULT = new SessionLimits(500, 20, 200);
}
