package io.dataclay.serialization;

import org.objenesis.ObjenesisStd;
import org.objenesis.instantiator.ObjectInstantiator;

/**
 * Creates model instances without running a constructor (their state comes from the store, or
 * they are proxies of stored objects). Instantiators are cached per Class, never per name: a
 * redeployed model is another class.
 */
public final class Instances {
  private static final ObjenesisStd OBJENESIS = new ObjenesisStd(false);
  private static final ClassValue<ObjectInstantiator<?>> CACHE = new ClassValue<>() {
    @Override
    protected ObjectInstantiator<?> computeValue(Class<?> type) {
      return OBJENESIS.getInstantiatorOf(type);
    }
  };

  private Instances() {}

  /** A new, unconstructed instance of {@code type}. */
  public static <T> T of(Class<T> type) {
    return type.cast(CACHE.get(type).newInstance());
  }
}
