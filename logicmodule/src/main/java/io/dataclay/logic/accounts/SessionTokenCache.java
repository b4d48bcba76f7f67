package io.dataclay.logic.accounts;

import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.SessionRecord;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sessions recently read from the database, with the datasets their account may use, so that
 * authenticating a call costs no query. The database stays the truth: this Logic Module is its
 * only writer, and every change that could make an entry stale (closing a session, a data
 * contract granted or revoked) invalidates here after it is committed; contracts that begin or
 * end by themselves are judged against the clock at every use. A read that raced with an invalidation is
 * not cached (the generation check), so a closed session is never served from here.
 */
final class SessionTokenCache {
  private static final int MAX_ENTRIES = 100_000;

  /** A session row, the datasets its account owns and the contracts granted to it, as read together. */
  record Entry(SessionRecord session, List<String> owned, List<ContractRecord> contracts) {}

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private long generation;

  /** The cached entry for a token hash, or null. */
  Entry get(String tokenSha256) {
    return entries.get(tokenSha256);
  }

  /** The current generation: read it before loading an entry from the database. */
  synchronized long generation() {
    return generation;
  }

  /** Caches an entry loaded at {@code loadedAt}, unless something was invalidated since. */
  synchronized void put(String tokenSha256, Entry entry, long loadedAt) {
    if (loadedAt != generation) {
      return;
    }
    if (entries.size() >= MAX_ENTRIES) {
      entries.clear();
    }
    entries.put(tokenSha256, entry);
  }

  /** Forgets one session (it was closed). */
  synchronized void invalidate(String tokenSha256) {
    generation++;
    entries.remove(tokenSha256);
  }

  /** Forgets every session (dataset access changed). */
  synchronized void invalidateAll() {
    generation++;
    entries.clear();
  }
}
