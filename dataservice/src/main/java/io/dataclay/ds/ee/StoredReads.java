package io.dataclay.ds.ee;

import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests an account's process vouched are answered by one field of the target object as it
 * is stored ({@code ExecuteResult.stored_field}: field reads, and methods that only return a field):
 * the Data Service answers the next ones of that account from its store, without waking the
 * process. A promise holds for the models the process ran it with: every deployment to the account
 * forgets them all, and a promise from a call sent before that deployment is not kept. Bounded: a
 * process cannot grow it past {@link #MAX_KEPT} entries.
 */
final class StoredReads {
  static final int MAX_KEPT = 4096;

  private record Read(String className, ExecutionKind kind, String name, ByteBuffer payload) {
    static Read of(ExecutionRequest r) {
      return new Read(r.className(), r.kind(), r.name(), ByteBuffer.wrap(r.payload()));
    }
  }

  private final Map<Read, String> fields = new ConcurrentHashMap<>();
  // read on every call sent (a volatile read); changed and compared under this object's lock
  private volatile long generation;

  /** The current deployment generation, to hand back to {@link #learn} with the request's answer. */
  long generation() {
    return generation;
  }

  /**
   * The process answered {@code request}, sent under {@code sentAt}, with field {@code field} as
   * stored; kept unless the models changed since or the table is full.
   */
  void learn(ExecutionRequest request, String field, long sentAt) {
    if (request.nested() || request.kind() == ExecutionKind.SET_FIELD) {
      return; // only a client's reads are answered from the store
    }
    Read read = Read.of(request);
    if (field.equals(fields.get(read))) {
      return;
    }
    synchronized (this) {
      if (sentAt == generation && fields.size() < MAX_KEPT) {
        fields.put(read, field);
      }
    }
  }

  /** The field whose stored value answers {@code request}, or null when no promise covers it. */
  String field(ExecutionRequest request) {
    if (fields.isEmpty() || request.nested()) {
      return null; // model code reads what its call sees, in the environment
    }
    return fields.get(Read.of(request));
  }

  /** The models changed: no promise holds any more. */
  synchronized void forget() {
    generation++;
    fields.clear();
  }
}
