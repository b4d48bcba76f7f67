package io.dataclay.ds.service;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.NotAuthenticatedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Registers stored objects with the Logic Module off the client's path. Objects made persistent
 * without an alias are queued and registered in the background, many per Logic Module call; an
 * alias still needs the Logic Module's answer (it decides uniqueness), so registrations with one
 * wait for the queue ahead of them and are then made synchronously.
 *
 * <p>Why this is safe: an object is durable in this backend's store before it is queued, the
 * client that made it knows where it is, references to it carry this backend as a hint, and a
 * Logic Module lookup that misses calls {@link #flush} on every live backend before it answers
 * "does not exist". Crash note: queued registrations live in DRAM only; if the Data Service dies
 * with some queued, the store still holds those objects and the next start re-registers every
 * stored object ({@link #reconcile}) because no clean-shutdown mark was left.
 */
public final class QueuedRegistrations implements LogicModuleGateway, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(QueuedRegistrations.class.getName());
  private static final int BATCH = 10_000;
  private static final long RETRY_MAX_MS = 2_000;
  /**
   * How long the registrar lets a small batch grow before sending it: objects made persistent
   * one by one then cost the Logic Module one call and one transaction per few hundred, not per
   * object (a flush does not wait for it).
   */
  private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final LogicModuleGateway lm;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final List<StoredObject> queue = new ArrayList<>();
  private final Thread worker;
  private long queued;       // objects ever queued (including reconciliation)
  private long registered;   // of those, how many the Logic Module has accepted
  private boolean reconciling;
  private boolean closed;
  private int flushing;      // threads waiting in flush: the registrar sends at once for them

  /** Starts the background registrar over {@code lm}. */
  public QueuedRegistrations(LogicModuleGateway lm) {
    this.lm = lm;
    this.worker = new Thread(this::run, "dataclay-ds-registrar");
    this.worker.setDaemon(true);
    this.worker.start();
  }

  @Override
  public Session validateSession(String token) {
    return lm.validateSession(token);
  }

  /**
   * Without an alias: queues the objects and returns (they are registered in the background).
   * With an alias: waits for everything queued before, then registers synchronously, so the
   * caller gets the Logic Module's verdict (e.g. ALIAS_ALREADY_EXISTS) and can roll back.
   */
  @Override
  public void registerObjects(List<StoredObject> objects, String alias, UUID aliasObjectId) {
    if (alias == null) {
      enqueue(objects);
      return;
    }
    flush(Duration.ofSeconds(30));
    lm.registerObjects(objects, alias, aliasObjectId);
  }

  /**
   * Re-registers every object this backend masters (after an unclean stop some may never have
   * reached the Logic Module; registering one again changes nothing). Runs in the background,
   * reading only headers, at most a few batches ahead of the Logic Module; {@link #flush} waits
   * for it to finish.
   */
  public void reconcile(ObjectStore store) {
    lock.lock();
    try {
      reconciling = true;
    } finally {
      lock.unlock();
    }
    Thread t = new Thread(() -> {
      try {
        List<StoredObject> chunk = new ArrayList<>(BATCH);
        store.forEachId(id -> store.header(id).ifPresent(h -> {
          if (h.masterBackendId() == null) {
            chunk.add(new StoredObject(id, h, Map.of()));
            if (chunk.size() == BATCH) {
              enqueue(chunk);
              chunk.clear();
              awaitBacklogBelow(4L * BATCH);
            }
          }
        }));
        enqueue(chunk);
      } finally {
        lock.lock();
        try {
          reconciling = false;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    }, "dataclay-ds-reconcile");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Returns once everything queued before the call is registered.
   *
   * @throws BackendUnavailableException when that does not happen within {@code timeout}
   */
  @Override
  public void flush(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    flushing++;
    changed.signalAll();
    try {
      while (reconciling && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new BackendUnavailableException("this backend is still re-registering its objects after an "
              + "unclean stop; retry shortly");
        }
        changed.awaitNanos(left);
      }
      long target = queued;
      while (registered < target) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new BackendUnavailableException((target - registered)
              + " stored objects are not yet registered with the Logic Module (is it reachable?)");
        }
        changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while registering objects");
    } finally {
      flushing--;
      lock.unlock();
    }
  }

  /** Objects queued and not yet registered. */
  public long pending() {
    lock.lock();
    try {
      return queued - registered;
    } finally {
      lock.unlock();
    }
  }

  /** Stops the registrar; call {@link #flush} first to leave nothing queued. */
  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    worker.interrupt();
  }

  private void awaitBacklogBelow(long limit) {
    lock.lock();
    try {
      while (queued - registered >= limit && !closed) {
        changed.awaitUninterruptibly();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Queues {@code objects}. Wakes the registrar only when that changes what it does: the queue was
   * empty (it waits for a first object) or has reached a full batch (it stops lingering). Waking it
   * for every object of a linger made each one-by-one make_persistent pay a thread wake-up.
   */
  private void enqueue(List<StoredObject> objects) {
    if (objects.isEmpty()) {
      return;
    }
    lock.lock();
    try {
      boolean wasEmpty = queue.isEmpty();
      queue.addAll(objects);
      queued += objects.size();
      if (wasEmpty || queue.size() >= BATCH) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private void run() {
    long backoff = 50;
    while (true) {
      List<StoredObject> batch;
      lock.lock();
      try {
        while (queue.isEmpty() && !closed) {
          changed.awaitUninterruptibly();
        }
        long lingerEnd = System.nanoTime() + LINGER_NANOS;
        long left;
        while (queue.size() < BATCH && flushing == 0 && !closed && (left = lingerEnd - System.nanoTime()) > 0) {
          try {
            changed.awaitNanos(left);
          } catch (InterruptedException e) {
            return; // close() interrupts the registrar
          }
        }
        if (closed) {
          return;
        }
        batch = new ArrayList<>(queue.subList(0, Math.min(BATCH, queue.size())));
      } finally {
        lock.unlock();
      }
      try {
        lm.registerObjects(batch, null, null);
        backoff = 50;
      } catch (BackendUnavailableException | NotAuthenticatedException e) {
        // the Logic Module is down or restarting, or forgot our session (the heartbeat logs in again)
        LOG.fine(() -> "Logic Module unavailable, " + batch.size() + " registrations wait: " + e.getMessage());
        if (!sleep(backoff)) {
          return;
        }
        backoff = Math.min(RETRY_MAX_MS, backoff * 2);
        continue;
      } catch (DataClayException e) {
        // Not retryable (the Logic Module refused the batch as such): keep serving the objects; a
        // lookup of one of them will answer "does not exist" until the next reconciliation.
        LOG.log(Level.WARNING, "the Logic Module refused to register " + batch.size() + " objects", e);
      }
      lock.lock();
      try {
        queue.subList(0, batch.size()).clear();
        registered += batch.size();
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  private static boolean sleep(long ms) {
    try {
      TimeUnit.MILLISECONDS.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
