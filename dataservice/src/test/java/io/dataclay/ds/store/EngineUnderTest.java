package io.dataclay.ds.store;

import java.util.function.UnaryOperator;

/**
 * A store engine as the contract tests see it: its configuration name, what it promises, and the
 * settings its tests open it with. An engine's test builds one and hands the same to
 * {@link ObjectStoreContract} (no store key) and {@link EncryptedStoreContract} (with one).
 */
public record EngineUnderTest(String name, boolean durable, boolean crashConsistent, boolean bounded,
    UnaryOperator<StoreConfig> settings) {
  /** A durable, crash-consistent engine with a fixed capacity, opened with its name, pool and size only. */
  public static EngineUnderTest of(String name) {
    return new EngineUnderTest(name, true, true, true, UnaryOperator.identity());
  }

  /** The same engine keeping nothing across close and reopen (so neither crash-consistent nor bounded). */
  public EngineUnderTest notDurable() {
    return new EngineUnderTest(name, false, false, false, settings);
  }

  /** The same engine, durable only at its checkpoints: a write acknowledged since the last may be lost. */
  public EngineUnderTest notCrashConsistent() {
    return new EngineUnderTest(name, durable, false, bounded, settings);
  }

  /** The same engine without a fixed capacity that writes can exhaust. */
  public EngineUnderTest unbounded() {
    return new EngineUnderTest(name, durable, crashConsistent, false, settings);
  }

  /** The same engine opened with {@code more} settings on top of its own. */
  public EngineUnderTest with(UnaryOperator<StoreConfig> more) {
    return new EngineUnderTest(name, durable, crashConsistent, bounded, c -> more.apply(settings.apply(c)));
  }
}
