package io.dataclay.logic.metadata;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What failover records: each backend's term (raised each time masters are promoted away from
 * it), the promotions a new master has not confirmed yet, and the demotions an old master has not
 * applied yet. A promotion is recorded (master, replicas, term, both to-do rows) in one transaction
 * before anybody is told, so a Logic Module that dies half-way tells the rest after its restart.
 */
public final class FailoverStore {
  private final Jdbc jdbc;

  FailoverStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /** An object and a backend (a promotion to confirm there, or a demotion to apply there). */
  public record Move(String objectId, String backendId) {}

  /** Every backend's term; a backend never fenced has none (term 0). */
  public Map<String, Long> terms() {
    return jdbc.transaction(c -> {
      Map<String, Long> out = new HashMap<>();
      for (Object[] row : c.query("SELECT backend_id, term FROM backend_terms",
          rs -> new Object[] {rs.getString(1), rs.getLong(2)})) {
        out.put((String) row[0], (Long) row[1]);
      }
      return out;
    });
  }

  /**
   * Makes each object's chosen replica backend ({@code newMasters}: object ID to backend) its master
   * in place of {@code oldMaster}, raising the old master's term, in one transaction. An object no
   * longer mastered on {@code oldMaster}, or whose chosen backend no longer holds a replica, is left
   * as it is. Returns the objects promoted, with their new masters.
   */
  public List<Move> promote(String oldMaster, Map<String, String> newMasters) {
    return jdbc.transaction(c -> {
      List<Move> done = new ArrayList<>();
      for (Map.Entry<String, String> e : newMasters.entrySet()) {
        String id = e.getKey();
        String to = e.getValue();
        boolean replica = c.queryOne("SELECT 1 FROM object_replicas WHERE object_id = ? AND backend_id = ?",
            rs -> 1, id, to).isPresent();
        if (!replica || c.update("UPDATE objects SET master_backend_id = ? WHERE id = ? AND master_backend_id = ?",
            to, id, oldMaster) != 1) {
          continue;
        }
        c.update("DELETE FROM object_replicas WHERE object_id = ? AND backend_id = ?", id, to);
        c.update("INSERT INTO object_demotions (object_id, backend_id, master_backend_id) VALUES (?, ?, ?)"
            + " ON CONFLICT (object_id, backend_id) DO UPDATE SET master_backend_id = excluded.master_backend_id",
            id, oldMaster, to);
        // an earlier promotion of this object that its new master never confirmed is void now
        c.update("DELETE FROM object_promotions WHERE object_id = ?", id);
        c.update("INSERT INTO object_promotions (object_id, backend_id) VALUES (?, ?)", id, to);
        done.add(new Move(id, to));
      }
      if (!done.isEmpty()) {
        c.update("INSERT INTO backend_terms (backend_id, term) VALUES (?, 1)"
            + " ON CONFLICT (backend_id) DO UPDATE SET term = backend_terms.term + 1", oldMaster);
      }
      return done;
    });
  }

  /** The promotions not confirmed yet by their new masters (who are still the masters). */
  public List<Move> pendingPromotions() {
    return jdbc.transaction(c -> c.query("SELECT p.object_id, p.backend_id FROM object_promotions p JOIN objects o"
        + " ON o.id = p.object_id AND o.master_backend_id = p.backend_id ORDER BY p.backend_id, p.object_id",
        rs -> new Move(rs.getString(1), rs.getString(2))));
  }

  /** The objects mastered on {@code backendId} that have replicas, each with its replicas' backends. */
  public Map<String, List<String>> replicasOfMastersOn(String backendId) {
    return jdbc.transaction(c -> {
      Map<String, List<String>> out = new java.util.LinkedHashMap<>();
      for (String[] row : c.query("SELECT r.object_id, r.backend_id FROM object_replicas r JOIN objects o"
          + " ON o.id = r.object_id WHERE o.master_backend_id = ? ORDER BY r.object_id, r.backend_id",
          rs -> new String[] {rs.getString(1), rs.getString(2)}, backendId)) {
        out.computeIfAbsent(row[0], k -> new ArrayList<>()).add(row[1]);
      }
      return out;
    });
  }

  /** The other replicas of an object (besides its master), to follow a new master. */
  public List<String> replicasOf(String id) {
    return jdbc.transaction(c -> c.query("SELECT backend_id FROM object_replicas WHERE object_id = ? ORDER BY"
        + " backend_id", rs -> rs.getString(1), id));
  }

  /** Forgets promotions that {@code backendId} confirmed. */
  public void confirmPromotions(String backendId, List<String> ids) {
    jdbc.transaction(c -> {
      List<Object[]> rows = new ArrayList<>(ids.size());
      for (String id : ids) {
        rows.add(new Object[] {id, backendId});
      }
      c.batch("DELETE FROM object_promotions WHERE object_id = ? AND backend_id = ?", rows);
      return null;
    });
  }

  /** Up to {@code limit} demotions {@code backendId} must apply (each with the object's master now). */
  public List<Move> demotions(String backendId, int limit) {
    return jdbc.transaction(c -> c.query("SELECT object_id, master_backend_id FROM object_demotions WHERE"
        + " backend_id = ? ORDER BY object_id LIMIT " + limit, rs -> new Move(rs.getString(1), rs.getString(2)),
        backendId));
  }

  /**
   * Forgets demotions {@code backendId} applied; returns them with each object's master now, from
   * which the backend gets a fresh replica.
   */
  public List<Move> applied(String backendId, List<String> ids) {
    return jdbc.transaction(c -> {
      List<Move> out = new ArrayList<>();
      for (String id : ids) {
        c.queryOne("SELECT o.master_backend_id FROM object_demotions d JOIN objects o ON o.id = d.object_id"
                + " WHERE d.object_id = ? AND d.backend_id = ?", rs -> rs.getString(1), id, backendId)
            .ifPresent(master -> out.add(new Move(id, master)));
        c.update("DELETE FROM object_demotions WHERE object_id = ? AND backend_id = ?", id, backendId);
      }
      return out;
    });
  }
}
