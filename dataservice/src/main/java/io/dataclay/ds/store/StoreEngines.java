package io.dataclay.ds.store;

import io.dataclay.ds.store.heap.HeapEngine;
import io.dataclay.ds.store.kv.KvEngine;
import io.dataclay.ds.store.memory.MemoryEngine;
import io.dataclay.ds.store.postgres.PostgresEngine;
import io.dataclay.ds.store.twolevel.TwoLevelEngine;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;

/**
 * The registry of store engines: the one place that lists them. Adding an engine is a package
 * declaring its {@link StoreEngine} and one line here; `dataservice.jar engines` prints this list, and
 * the Python CLI, the tests and the benchmarks ask it.
 */
public final class StoreEngines {
  /** Every engine this build has, in the order `dataclay` lists them (kv first: the default). */
  public static final List<StoreEngine> ALL =
      List.of(KvEngine.ENGINE, HeapEngine.ENGINE, TwoLevelEngine.ENGINE, PostgresEngine.ENGINE, MemoryEngine.ENGINE);

  private StoreEngines() {}

  /** The engines' names, in registry order. */
  public static List<String> names() {
    return ALL.stream().map(StoreEngine::name).toList();
  }

  /**
   * The engine called {@code name}.
   *
   * @throws InvalidArgumentException for an unknown name; the message lists the valid ones
   */
  public static StoreEngine named(String name) {
    for (StoreEngine engine : ALL) {
      if (engine.name().equals(name)) {
        return engine;
      }
    }
    throw new InvalidArgumentException("unknown store engine '" + name + "'; valid engines: " + String.join(", ", names()));
  }
}
