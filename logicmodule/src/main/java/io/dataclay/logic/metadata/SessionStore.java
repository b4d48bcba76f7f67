package io.dataclay.logic.metadata;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Sessions by the SHA-256 of their token (the token itself is never stored). */
public final class SessionStore {
  private final Jdbc jdbc;

  SessionStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /** Stores a new session; durable when this returns. Its account and dataset must exist. */
  public void insert(SessionRecord s) {
    jdbc.transaction(c -> c.update("INSERT INTO sessions (token_sha256, username, dataset, expires_at_ms,"
        + " closed, backend_id) VALUES (?, ?, ?, ?, ?, ?)", s.tokenSha256(), s.username(), s.dataset(), s.expiresAtMs(),
        s.closed(), s.backendId()));
  }

  /** The session with that token hash (with its account's admin flag), if any. */
  public Optional<SessionRecord> find(String tokenSha256) {
    return jdbc.transaction(c -> c.queryOne("SELECT s.token_sha256, s.username, s.dataset, s.expires_at_ms,"
            + " s.closed, a.admin, s.backend_id FROM sessions s JOIN accounts a ON a.username = s.username"
            + " WHERE s.token_sha256 = ?",
        rs -> new SessionRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getBoolean(5),
            rs.getBoolean(6), rs.getString(7)),
        tokenSha256));
  }

  /** Marks the session closed; false when there is no such session. */
  public boolean close(String tokenSha256) {
    return jdbc.transaction(c -> c.update("UPDATE sessions SET closed = ? WHERE token_sha256 = ?",
        true, tokenSha256)) > 0;
  }

  /** Closes every session of an account; the number closed. */
  public int closeAllOf(String username) {
    return jdbc.transaction(c -> c.update("UPDATE sessions SET closed = ? WHERE username = ? AND closed = ?",
        true, username, false));
  }

  /** Deletes sessions that are closed or expired at {@code nowMs}; the number deleted. */
  public int purgeEnded(long nowMs) {
    return jdbc.transaction(c -> c.update("DELETE FROM sessions WHERE closed = ? OR expires_at_ms <= ?",
        true, nowMs));
  }

  /** Sessions neither closed nor expired at {@code nowMs}. */
  public long countOpen(long nowMs) {
    return jdbc.transaction(c -> c.queryLong("SELECT COUNT(*) FROM sessions WHERE closed = ? AND expires_at_ms > ?",
        false, nowMs));
  }

  /** Users' sessions (not backends') neither closed nor expired at {@code nowMs}, per account that has any. */
  public Map<String, Long> countOpenByAccount(long nowMs) {
    List<Map.Entry<String, Long>> rows = jdbc.transaction(c -> c.query("SELECT username, COUNT(*) FROM sessions"
        + " WHERE closed = ? AND expires_at_ms > ? AND backend_id IS NULL GROUP BY username",
        rs -> Map.entry(rs.getString(1), rs.getLong(2)), false, nowMs));
    Map<String, Long> out = new LinkedHashMap<>();
    rows.forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  /** Sessions of {@code username} neither closed nor expired at {@code nowMs}. */
  public long countOpenOf(String username, long nowMs) {
    return jdbc.transaction(c -> c.queryLong("SELECT COUNT(*) FROM sessions WHERE username = ? AND closed = ?"
        + " AND expires_at_ms > ?", username, false, nowMs));
  }
}
