package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.EngineFigure;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.kv.KvStore;
import io.dataclay.ds.store.pmem.PoolStore;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code 2lm} engine (two-level memory): a DRAM cache of records in front of a kv pool in
 * NVRAM. Reads of cached records never touch NVRAM; writes go to DRAM and are marked dirty.
 * Dirty records are written back when evicted (CLOCK, to stay within the configured cache size),
 * at every checkpoint (periodic, on {@link #checkpoint()} and on a clean {@link #close()}).
 * Records larger than a quarter of the cache, and removals, are written through to NVRAM at once.
 *
 * <p>The promise, weaker than the other pmem engines': every write acknowledged before the
 * start of the last completed checkpoint survives a crash. A write after it may be lost, or may
 * survive (written back by an eviction or a checkpoint in progress), so after a crash each object
 * holds its state at the last completed checkpoint or a later state it was written to, always
 * whole (each write-back is one NVRAM transaction per object or per batch of objects). A putAll
 * after the last checkpoint may survive in part.
 *
 * <p>With a store key, what is written back to the kv pool is sealed ({@link Encryption}); the
 * DRAM cache holds values in clear, like every other copy in the Data Service's memory.
 */
public final class TwoLevelStore implements ObjectStore {
  /** Engine name in configuration. */
  public static final String ENGINE = "2lm";

  /** Share of the pool the cache lets dirty records plus stored ones fill before writing through. */
  private static final double NVRAM_HEADROOM = 0.6;

  private static final Logger LOG = Logger.getLogger(TwoLevelStore.class.getName());

  private final KvStore records; // the kv pool itself, for record lengths
  private final ObjectStore nvram; // the kv pool, through encryption when the store has a key
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();
  private final DramCache cache;
  private final StoreConfig config;
  private final RecordCodec codec = new RecordCodec();
  private final ScheduledExecutorService checkpoints;
  private final Object checkpointLock = new Object();
  private volatile String checkpointFailure;
  private boolean closed; // under checkpointLock

  private TwoLevelStore(KvStore records, ObjectStore nvram, StoreConfig config) {
    this.records = records;
    this.nvram = nvram;
    this.config = config;
    this.cache = new DramCache(nvram, config.cacheBytes());
    nvram.forEachId(id -> cache.known(id, nvram.header(id).orElseThrow()));
    checkpoints = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "dataclay-2lm-checkpoint");
      t.setDaemon(true);
      return t;
    });
    checkpoints.scheduleWithFixedDelay(this::periodicCheckpoint, config.checkpointMillis(),
        config.checkpointMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Opens the kv pool in {@code config.path()} (marked as a 2lm pool) with a DRAM cache of
   * {@code config.cacheBytes()}, checkpointing every {@code config.checkpointMillis()}. With a
   * key, what is written back to NVRAM is sealed and the DRAM cache holds values in clear, like
   * every other copy in the Data Service's memory.
   *
   * @throws InvalidArgumentException when the directory or pool cannot be used as a 2lm pool
   */
  public static TwoLevelStore open(StoreConfig config, Encryption atRest) {
    PoolStore<KvStore> pool = KvStore.openFor(ENGINE, config, atRest.key());
    try {
      return new TwoLevelStore(pool.layout(), atRest.seal(pool), config);
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    List<UUID> ids = objects.stream().map(StoredObject::id).toList();
    long bytes = 0;
    for (StoredObject object : objects) {
      bytes += Cell.sizeOf(object);
    }
    boolean through = !cache.cacheable(bytes) || !nvramHoldsDirtyPlus(bytes);
    List<StoredObject> copies = new ArrayList<>(objects.size());
    if (!through) {
      cache.makeRoom(bytes); // before any change: a full NVRAM refuses the whole batch here
      for (StoredObject object : objects) {
        copies.add(object.deepCopy());
      }
    }
    if (through && cache.dirtyCount() > 0 && !nvramHoldsDirtyPlus(bytes)) {
      writeBackAllNow(); // NVRAM nearly full: what was acknowledged lands before anything new
    }
    try (KeyLocks.Held nvramHeld = through ? cache.nvramLocks.writeLockAll(ids) : null;
        KeyLocks.Held held = cache.locks.writeLockAll(ids)) {
      if (through) {
        nvram.putAll(objects); // one transaction, durable: nothing of it is cached
      }
      for (int i = 0; i < ids.size(); i++) {
        UUID id = ids.get(i);
        Cell now = through ? Cell.inNvram(codec.canonical(objects.get(i).header())) : Cell.cached(copies.get(i), true);
        cache.set(id, cache.cells.get(id), now);
      }
    }
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    Cell cell = cache.cells.get(id);
    if (cell == null) {
      return Optional.empty();
    }
    if (cell.cached != null) {
      cell.referenced = true;
      hits.increment();
      return Optional.of(cell.cached.deepCopy()); // a cached record is immutable: no lock needed
    }
    misses.increment();
    StoredObject loaded = load(id);
    if (loaded == null) {
      return Optional.empty();
    }
    Cell now = cache.cells.get(id);
    // The cache's own record is copied out; one read from NVRAM and not cached is the caller's.
    return Optional.of(now != null && now.cached == loaded ? loaded.deepCopy() : loaded);
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    Cell cell = cache.cells.get(id);
    if (cell == null) {
      return Optional.empty();
    }
    if (cell.cached != null) {
      return Optional.of(StoredObject.referencesOf(cell.cached.fields())); // immutable: no lock, no copy
    }
    // Not cached: NVRAM holds its newest state, unless a writer caches a newer one meanwhile,
    // which the recorder of a collection sees anyway (it records every write's references).
    return nvram.references(id);
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    Cell cell = cache.cells.get(id);
    return cell == null ? Optional.empty() : Optional.of(cell.header);
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    UUID id = delta.id();
    Cell cell = cache.cells.get(id);
    if (cell == null) {
      throw notStored(id);
    }
    if (cell.cached == null && cache.cacheable(records.recordLength(id))) {
      load(id); // a record being changed is hot: bring it into DRAM
    }
    long added = 0;
    for (FieldValue value : delta.changed().values()) {
      added += value.value().length + 16L * value.references().size();
    }
    boolean nearlyFull = !nvramHoldsDirtyPlus(added);
    if (nearlyFull && cache.dirtyCount() > 0) {
      writeBackAllNow();
    }
    cache.makeRoom(added); // before any change, as in putAll
    changeCell(delta, nearlyFull);
  }

  // Applies a delta in DRAM when the object is cached and stays so; otherwise writes it to NVRAM,
  // whose lock is then taken first (see DramCache), so the object lock is dropped and taken again.
  private void changeCell(ObjectDelta delta, boolean nearlyFull) {
    UUID id = delta.id();
    StampedLock nvramLock = cache.nvramLocks.of(id);
    long nvramStamp = 0;
    try {
      while (true) {
        StampedLock lock = cache.locks.of(id);
        long stamp = lock.writeLock();
        try {
          Cell old = cache.cells.get(id);
          if (old == null) {
            throw notStored(id);
          }
          StoredObject updated = old.cached == null ? null : old.cached.withDelta(delta);
          if (updated != null && !nearlyFull && cache.cacheable(Cell.sizeOf(updated))) {
            cache.set(id, old, Cell.cached(updated, true));
            return;
          }
          if (nvramStamp != 0) {
            if (updated == null) {
              nvram.applyDelta(delta); // not in DRAM, so NVRAM holds its newest state: durable now
            } else {
              nvram.put(updated); // too large to cache, or NVRAM nearly full: durable now, as a put would be
              cache.set(id, old, old.evicted());
            }
            return;
          }
        } finally {
          lock.unlockWrite(stamp);
        }
        nvramStamp = nvramLock.writeLock();
      }
    } finally {
      if (nvramStamp != 0) {
        nvramLock.unlockWrite(nvramStamp);
      }
    }
  }

  @Override
  public boolean remove(UUID id) {
    StampedLock nvramLock = cache.nvramLocks.of(id);
    long nvramStamp = nvramLock.writeLock();
    try {
      StampedLock lock = cache.locks.of(id);
      long stamp = lock.writeLock();
      try {
        Cell old = cache.cells.get(id);
        if (old == null) {
          return false;
        }
        nvram.remove(id); // written through: durable now, and it frees NVRAM room at once
        cache.drop(id, old);
        return true;
      } finally {
        lock.unlockWrite(stamp);
      }
    } finally {
      nvramLock.unlockWrite(nvramStamp);
    }
  }

  @Override
  public long count() {
    return cache.cells.size();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    cache.cells.keySet().forEach(action);
  }

  @Override
  public StoreStats stats() {
    StoreStats pool = nvram.stats();
    return new StoreStats(ENGINE, durability(), pool.path(), pool.capacityBytes(),
        pool.usedBytes() + cache.dirtyBytes(), cache.cells.size(), pool.encrypted());
  }

  @Override
  public List<EngineFigure> figures() {
    return List.of(
        new EngineFigure("dataclay_store_cache_hits", "2lm: reads answered from the DRAM cache.", true, hits.sum()),
        new EngineFigure("dataclay_store_cache_misses", "2lm: reads that went to NVRAM.", true, misses.sum()),
        new EngineFigure("dataclay_store_cache_bytes", "2lm: DRAM the cached records take.", false,
            cache.cachedBytes()),
        new EngineFigure("dataclay_store_cache_dirty_bytes", "2lm: bytes of records written in DRAM and not yet"
            + " written back to NVRAM (lost on power loss or kill -9).", false, cache.dirtyBytes()));
  }

  /**
   * Writes every record dirty when it is called back to NVRAM; when it returns, every write
   * acknowledged before the call is durable.
   *
   * @throws StoreFullException when NVRAM has no room for them (they stay dirty in DRAM)
   */
  @Override
  public void checkpoint() {
    synchronized (checkpointLock) {
      if (closed) {
        return; // a periodic checkpoint that started as the store closed: close wrote everything back
      }
      try {
        cache.writeBackAll();
      } catch (RuntimeException e) {
        if (checkpointFailure == null) {
          LOG.log(Level.WARNING, "2lm checkpoint of " + config.path() + " failed; retrying every "
              + config.checkpointMillis() + " ms: " + e.getMessage());
        }
        checkpointFailure = e.getMessage();
        throw e;
      }
      if (checkpointFailure != null) {
        LOG.info("2lm checkpoint of " + config.path() + " succeeded again");
        checkpointFailure = null;
      }
    }
  }

  /** Writes everything back, then closes the pool; the pool can be reopened afterwards. */
  @Override
  public void close() {
    checkpoints.shutdownNow();
    try {
      synchronized (checkpointLock) { // waits for a periodic checkpoint still running
        // Set first: a periodic checkpoint waiting for this lock must not touch NVRAM once it is closed.
        closed = true;
        cache.writeBackAll();
      }
    } catch (RuntimeException e) {
      throw new StoreFullException("2lm store " + config.path() + " closed with " + cache.dirtyCount()
          + " record(s) not written back, now lost: " + e.getMessage());
    } finally {
      nvram.close();
    }
  }

  /**
   * Whether NVRAM has room, with a margin for the allocator's own overhead, for every dirty
   * record plus {@code bytes} more. When it has not, writes go through to NVRAM (durable or
   * refused at once) after the dirty records are written back: the cache never acknowledges a
   * write that a full pool could not take later.
   */
  private boolean nvramHoldsDirtyPlus(long bytes) {
    StoreStats pool = nvram.stats();
    return pool.usedBytes() + cache.dirtyBytes() + bytes <= (long) (pool.capacityBytes() * NVRAM_HEADROOM);
  }

  private void writeBackAllNow() {
    synchronized (checkpointLock) {
      cache.writeBackAll();
    }
  }

  /** DRAM the cached records take now (an estimate, kept within the configured cache size). */
  long cachedBytes() {
    return cache.cachedBytes();
  }

  private String durability() {
    long ms = config.checkpointMillis();
    String promise = "at checkpoint (every " + ms + " ms): a crash can lose the writes of the last " + ms
        + " ms, each object recovers whole; DRAM cache " + cache.cachedBytes() + " of " + config.cacheBytes()
        + " bytes in use, " + cache.dirtyCount() + " record(s) (" + cache.dirtyBytes() + " bytes) not yet written back";
    String failure = checkpointFailure;
    return failure == null ? promise : promise + "; CHECKPOINTS FAILING, nothing new becomes durable: " + failure;
  }

  private void periodicCheckpoint() {
    try {
      checkpoint();
    } catch (RuntimeException e) {
      // Logged and shown in stats by checkpoint(); the next period retries.
    }
  }

  /** The record of {@code id}, cached afterwards when there is room; null when not stored. */
  private StoredObject load(UUID id) {
    Cell cell = cache.cells.get(id);
    if (cell == null || cell.cached != null) {
      return cell == null ? null : cell.cached;
    }
    StampedLock lock = cache.locks.of(id);
    long stamp = lock.writeLock();
    StoredObject record;
    try {
      cell = cache.cells.get(id);
      if (cell == null || cell.cached != null) {
        return cell == null ? null : cell.cached;
      }
      record = nvram.get(id).orElseThrow(() -> lost(id)); // fresh arrays, owned by the cache from here
      if (cache.cacheable(Cell.sizeOf(record))) {
        cache.set(id, cell, Cell.cached(record, false));
      }
    } finally {
      lock.unlockWrite(stamp);
    }
    cache.tryMakeRoom(0); // a read never fails for want of room: it only trims the cache if it can
    return record;
  }

  private ObjectDoesNotExistException notStored(UUID id) {
    return new ObjectDoesNotExistException("object " + id + " is not stored in " + config.path());
  }

  private static InternalException lost(UUID id) {
    return new InternalException("2lm store lists object " + id + " but its NVRAM record is missing");
  }
}
