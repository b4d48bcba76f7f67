package io.dataclay.ds.ee;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whose turn it is to run calls on an object: calls on one object run in one process at a time
 * (any number at once in that process, as they share its copy), so calls of different accounts on
 * a shared object take turns instead of changing two copies of it. A call whose object is another
 * process's turn waits, in arrival order, and is handed back once the turn passes to its process.
 *
 * @param <T> what a waiting call is (its process, request and future)
 */
final class ObjectTurns<T> {
  private static final class Turn<T> {
    Object holder;
    int running;
    final ArrayDeque<Map.Entry<Object, T>> waiting = new ArrayDeque<>();
  }

  private final Map<UUID, Turn<T>> turns = new ConcurrentHashMap<>();

  /** Whether {@code call} of {@code holder} may run on {@code id} now (true: it must call {@link #done}); else it waits. */
  boolean tryRun(UUID id, Object holder, T call) {
    boolean[] now = {false};
    turns.compute(id, (k, t) -> {
      if (t == null) {
        t = new Turn<>();
        t.holder = holder;
      }
      if (t.holder == holder && t.waiting.isEmpty()) {
        t.running++;
        now[0] = true;
      } else {
        t.waiting.add(Map.entry(holder, call));
      }
      return t;
    });
    return now[0];
  }

  /**
   * A call on {@code id} ended; returns the waiting calls that may run now (each must call {@link
   * #done} when it ends): when the object's last running call ended, the next waiting call's
   * process takes the turn with every call of it waiting in a row behind.
   */
  List<T> done(UUID id) {
    List<T> next = new ArrayList<>();
    turns.computeIfPresent(id, (k, t) -> {
      t.running--;
      if (t.running > 0) {
        return t;
      }
      if (t.waiting.isEmpty()) {
        return null;
      }
      t.holder = t.waiting.peek().getKey();
      while (!t.waiting.isEmpty() && t.waiting.peek().getKey() == t.holder) {
        next.add(t.waiting.poll().getValue());
        t.running++;
      }
      return t;
    });
    return next;
  }
}
