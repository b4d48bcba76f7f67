package io.dataclay.ds.store.postgres;

import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.KeyAdmission;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.engine.RecordEdit;
import io.dataclay.ds.store.engine.RecordInput;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.StoreFullException;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The {@code postgres} engine, the disk-based baseline: one row per object in a PostgreSQL
 * database ({@link ObjectTable}), this backend's rows apart from other backends' by its name.
 * Every put, putAll, applyDelta and remove is one transaction, durable when it commits (as the
 * server's fsync and synchronous_commit settings make it). Headers, the count and the IDs come
 * from a DRAM cache filled at open and kept on every write, so {@link #header} never touches the
 * database. Writers of one object are serialised here, so the cache follows commit order.
 *
 * <p>One store per backend: the pool directory (when configured) records the engine and is locked
 * like every engine's, and a PostgreSQL advisory lock held for the store's lifetime keeps a second
 * Data Service with the same backend name off the same rows, on any machine.
 *
 * <p>With a store key, the backend's key check is in {@link KeyCheckTable} and the values this
 * store is given are already sealed (see {@link io.dataclay.ds.store.crypt.Encryption}). A removal is a DELETE: PostgreSQL keeps the dead row
 * version (and its TOAST chunks) in the table's files until VACUUM reuses the space, and in its
 * WAL until that is recycled, so only encryption keeps removed values unreadable there.
 */
public final class PostgresStore implements ObjectStore {
  /** Engine name in configuration. */
  public static final String ENGINE = "postgres";
  /** The durability promise reported in stats. */
  public static final String DURABILITY = "durable at return (one committed PostgreSQL transaction per call)";

  private static final int CONNECTIONS = 4;

  /** What the DRAM cache keeps per object. */
  private record Meta(ObjectHeader header, long recordBytes) {}

  private final PoolDirectory directory;
  private final BackendLock backendLock;
  private final ConnectionPool pool;
  private final ObjectTable table;
  private final String where;
  private final RecordCodec codec = new RecordCodec();
  private final boolean encrypted;
  private final ConcurrentHashMap<UUID, Meta> metas = new ConcurrentHashMap<>();
  private final KeyLocks locks = new KeyLocks(256);
  private final AtomicLong usedBytes = new AtomicLong();

  private PostgresStore(PoolDirectory directory, BackendLock backendLock, ConnectionPool pool, StoreConfig config,
      boolean encrypted) {
    this.directory = directory;
    this.encrypted = encrypted;
    this.backendLock = backendLock;
    this.pool = pool;
    this.table = new ObjectTable(config.backendName());
    this.where = config.redactedDatabaseUrl() + " (backend " + config.backendName() + ")";
  }

  /**
   * Connects to {@code config.databaseUrl()}, takes this backend's lock, admits the store key (or
   * its absence) against the backend's recorded key check, creates the object table when missing
   * and loads the headers of its objects.
   *
   * @throws InvalidArgumentException when the URL is missing or wrong, the database cannot be
   *     reached (the message names the URL without its password), the pool directory belongs to
   *     another engine, this backend's store is already open, or the key is refused (see
   *     {@link KeyAdmission}; nothing is written then)
   */
  public static PostgresStore open(StoreConfig config, StoreKey key) {
    String url = checkedUrl(config);
    PoolDirectory directory = config.path() == null ? null : PoolDirectory.claim(config.path(), ENGINE);
    ConnectionPool pool = new ConnectionPool(url, CONNECTIONS, config.backendName());
    BackendLock lock = null;
    try {
      lock = BackendLock.take(pool, config.backendName());
      PostgresStore store = new PostgresStore(directory, lock, pool, config, admit(pool, config, key));
      store.load();
      return store;
    } catch (RuntimeException e) {
      pool.close();
      if (lock != null) {
        lock.close();
      }
      if (directory != null) {
        directory.close();
      }
      throw e;
    }
  }

  /**
   * Deletes every row of {@code config}'s backend (objects and key check) and vacuums the tables,
   * then erases its pool directory if it has one. Needs no key; refused while the backend's store
   * is open anywhere. Returns what was done. VACUUM makes the dead row versions' space reusable;
   * their bytes may stay in the table's files until it is reused, and in the WAL and backups.
   *
   * @throws InvalidArgumentException when the database cannot be reached or the store is open
   */
  public static String erase(StoreConfig config) {
    String url = checkedUrl(config);
    String where = config.redactedDatabaseUrl() + " (backend " + config.backendName() + ")";
    ObjectTable table = new ObjectTable(config.backendName());
    StringBuilder done = new StringBuilder();
    try (ConnectionPool pool = new ConnectionPool(url, 1, config.backendName());
        BackendLock lock = BackendLock.take(pool, config.backendName())) {
      int rows = pool.with(table::deleteAll);
      boolean keyed = pool.with(c -> KeyCheckTable.delete(c, config.backendName()));
      done.append(where).append(": ").append(rows).append(" object row(s)")
          .append(keyed ? " and its key check" : "").append(" deleted");
      try {
        pool.with(c -> {
          try (Statement s = c.createStatement()) { // auto-commit: VACUUM cannot run in a transaction
            s.execute("VACUUM " + ObjectTable.TABLE);
          }
          return null;
        });
        done.append(", table vacuumed");
      } catch (SQLException e) {
        done.append(", VACUUM failed (").append(e.getMessage()).append(")");
      }
    } catch (SQLException e) {
      throw new InvalidArgumentException("could not erase " + where + ": " + e.getMessage());
    }
    String dir = config.path() == null ? null : PoolDirectory.erase(config.path(), ENGINE);
    return dir == null ? done.toString() : done + "; " + dir;
  }

  private static String checkedUrl(StoreConfig config) {
    String url = config.databaseUrl();
    if (url == null || url.isBlank()) {
      throw new InvalidArgumentException("the postgres engine needs the JDBC URL of its database (DATACLAY_STORE_URL),"
          + " e.g. jdbc:postgresql://127.0.0.1:5432/dataclay?user=postgres; none was given");
    }
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new InvalidArgumentException("store URL '" + config.redactedDatabaseUrl()
          + "' is not a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)");
    }
    return url;
  }

  // Runs with the backend's lock held, so no other store of the backend records a check meanwhile.
  private static boolean admit(ConnectionPool pool, StoreConfig config, StoreKey key) {
    String backend = config.backendName();
    String where = "the store of backend '" + backend + "' in " + config.redactedDatabaseUrl();
    try {
      String recorded = pool.with(c -> KeyCheckTable.recorded(c, backend));
      boolean fresh = recorded == null && pool.with(new ObjectTable(backend)::isEmpty);
      KeyAdmission.Admitted admitted = KeyAdmission.admit(key, recorded, fresh, where);
      if (admitted.checkToRecord() != null) {
        // Recorded before the first write: a crash right after it leaves an empty backend that
        // opens only with this key, never rows written under a key nobody recorded.
        pool.with(c -> {
          KeyCheckTable.record(c, backend, admitted.checkToRecord());
          return null;
        });
      }
      return admitted.encrypted();
    } catch (SQLException e) {
      throw new InvalidArgumentException("could not read the key check of " + where + ": " + e.getMessage());
    }
  }

  /** Every write waits for the database's commit: never on a network thread. */
  @Override
  public boolean writesWithoutWaiting() {
    return false;
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    List<UUID> ids = objects.stream().map(StoredObject::id).toList();
    int n = ids.size();
    byte[][] records = new byte[n][];
    for (int i = 0; i < n; i++) {
      records[i] = codec.encode(objects.get(i));
    }
    try (KeyLocks.Held held = locks.writeLockAll(ids)) {
      sql("store " + n + " object(s)", () -> n == 1
          ? pool.with(c -> table.upsert(c, objects, records))
          : pool.transaction(c -> table.upsert(c, objects, records)));
      for (int i = 0; i < n; i++) {
        remember(ids.get(i), codec.canonical(objects.get(i).header()), records[i].length);
      }
    }
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    Meta meta = metas.get(id);
    if (meta == null) {
      return Optional.empty();
    }
    byte[] record = sql("read object " + id, () -> pool.with(c -> table.record(c, id)));
    // A row gone meanwhile was removed by a concurrent call after this one began.
    return record == null ? Optional.empty()
        : Optional.of(codec.decode(id, RecordInput.of(record), meta.header()));
  }

  /** Reads the record and skips its values: garbage collection needs no decryption. */
  @Override
  public Optional<Set<UUID>> references(UUID id) {
    if (!metas.containsKey(id)) {
      return Optional.empty();
    }
    byte[] record = sql("read object " + id, () -> pool.with(c -> table.record(c, id)));
    return record == null ? Optional.empty() : Optional.of(codec.references(id, RecordInput.of(record)));
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    Meta meta = metas.get(id);
    return meta == null ? Optional.empty() : Optional.of(meta.header());
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    UUID id = delta.id();
    locks.writing(id, () -> {
      Meta meta = metas.get(id);
      if (meta == null) {
        throw new ObjectDoesNotExistException("object " + id + " is not stored in " + where);
      }
      int length = sql("change object " + id, () -> pool.transaction(c -> {
        byte[] old = table.record(c, id);
        if (old == null) {
          throw new InternalException("object " + id + " is listed but has no row in " + where);
        }
        RecordInput current = RecordInput.of(old);
        byte[] updated = RecordEdit.plan(current, delta).toArray(current);
        table.updateRecord(c, id, updated);
        return updated.length;
      }));
      remember(id, meta.header(), length);
    });
  }

  @Override
  public boolean remove(UUID id) {
    return locks.writing(id, () -> {
      if (!metas.containsKey(id)) {
        return false;
      }
      sql("remove object " + id, () -> pool.with(c -> table.delete(c, id)));
      Meta old = metas.remove(id);
      usedBytes.addAndGet(-old.recordBytes());
      return true;
    });
  }

  @Override
  public long count() {
    return metas.size();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    metas.keySet().forEach(action);
  }

  @Override
  public StoreStats stats() {
    return new StoreStats(ENGINE, DURABILITY, where, 0, usedBytes.get(), metas.size(), encrypted);
  }

  @Override
  public void close() {
    try {
      pool.close();
      backendLock.close();
    } finally {
      if (directory != null) {
        directory.close();
      }
    }
  }

  private void remember(UUID id, ObjectHeader header, long recordBytes) {
    Meta old = metas.put(id, new Meta(header, recordBytes));
    usedBytes.addAndGet(recordBytes - (old == null ? 0 : old.recordBytes()));
  }

  private void load() {
    sql("create the object table", () -> pool.with(c -> {
      ObjectTable.create(c);
      return null;
    }));
    sql("load the object headers", () -> pool.transaction(c -> { // a cursor needs a transaction
      table.scan(c, (id, header, bytes) -> remember(id, codec.canonical(header), bytes));
      return null;
    }));
  }

  /** A database call. */
  private interface Call<T> {
    T run() throws SQLException;
  }

  /** Runs a call, turning a database failure into the error that says what it means for the caller. */
  private <T> T sql(String what, Call<T> call) {
    try {
      return call.run();
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      String message = "could not " + what + " in " + where + ": " + e.getMessage() + " (SQLSTATE " + state + ")";
      if (state.startsWith("08")) {
        throw new BackendUnavailableException(message);
      }
      if (state.startsWith("53")) {
        throw new StoreFullException(message);
      }
      throw new InternalException(message);
    }
  }
}
