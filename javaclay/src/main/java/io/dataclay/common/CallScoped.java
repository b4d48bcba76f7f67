package io.dataclay.common;

import java.util.function.Supplier;

/**
 * A value a thread holds for the length of one call (the runtime model objects use, a backend
 * call's session, the token its outgoing calls carry), for code deeper in that call to read
 * without passing it along. A nested call holds its own and puts back the outer one when it ends,
 * also when it throws.
 */
public final class CallScoped<T> {
  private final ThreadLocal<T> current = new ThreadLocal<>();

  /** The value of the call running on this thread, or null outside one. */
  public T get() {
    return current.get();
  }

  /** Runs {@code work} with {@code value} held by this thread, then puts back what it held before. */
  public void run(T value, Runnable work) {
    call(value, () -> {
      work.run();
      return null;
    });
  }

  /** What {@code work} returns, run with {@code value} held by this thread; then puts back what it held before. */
  public <R> R call(T value, Supplier<R> work) {
    T outer = current.get();
    current.set(value);
    try {
      return work.get();
    } finally {
      if (outer == null) {
        current.remove();
      } else {
        current.set(outer);
      }
    }
  }
}
