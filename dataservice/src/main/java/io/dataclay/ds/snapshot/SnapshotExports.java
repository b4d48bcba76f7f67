package io.dataclay.ds.snapshot;

import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * This backend's side of snapshots (docs/internals.md "Snapshots"): the freeze that fixes its part
 * of a cluster-wide cut, and the export of its master copies as of that cut. One snapshot at a
 * time; a new freeze ends the previous one.
 *
 * <p>Nothing here is durable: a backend that restarts during an export has lost its cut, and the
 * export fails (its stream breaks or the new process knows no such snapshot).
 */
public final class SnapshotExports {
  /** Objects and store bytes at the cut (for progress estimates). */
  public record Sizes(long objects, long bytes) {}

  /** Shortest and longest freeze a Logic Module may ask for. */
  static final long MIN_HOLD_MS = 50;
  static final long MAX_HOLD_MS = 10_000;
  /** An export must start this soon after its freeze, or the cut is dropped. */
  static final long START_WITHIN_MS = 5 * 60_000;
  private static final Pattern SNAPSHOT_ID = Pattern.compile("[0-9a-f]{32}");
  private static final Pattern DATASET = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}");
  private static final Logger LOG = Logger.getLogger(SnapshotExports.class.getName());

  private final SnapshotStore store;
  private final Supplier<Set<UUID>> staged;
  private final ScheduledExecutorService timer;
  private final long budgetBytes;
  // guarded by this
  private SnapshotCut current;
  private boolean exporting;
  private ScheduledFuture<?> thawTimer;
  private ScheduledFuture<?> expiry;

  /**
   * Snapshots of {@code store}, leaving out the objects {@code staged} by unfinished imports, keeping
   * at most {@code budgetBytes} of changed objects' states per export; {@code timer} opens gates and
   * drops unused cuts.
   */
  public SnapshotExports(SnapshotStore store, Supplier<Set<UUID>> staged, ScheduledExecutorService timer,
      long budgetBytes) {
    this.store = store;
    this.staged = staged;
    this.timer = timer;
    this.budgetBytes = budgetBytes;
  }

  /** The default budget of kept states: a quarter of the heap, at most 1 GiB. */
  public static long defaultBudget() {
    return Math.min(Runtime.getRuntime().maxMemory() / 4, 1L << 30);
  }

  /**
   * Closes the write gate (backends only: the Logic Module): waits up to half of {@code holdMs} for
   * the writes in flight, fixes the cut, and opens the gate again on {@link #thaw} or after
   * {@code holdMs}, whichever comes first.
   *
   * @throws BackendUnavailableException when the writes in flight did not finish in time (no cut)
   */
  public synchronized Sizes freeze(Session caller, String snapshotId, long holdMs, String dataset) {
    Permissions.requireBackend(caller, "FreezeWrites");
    checkId(snapshotId);
    if (holdMs < MIN_HOLD_MS || holdMs > MAX_HOLD_MS) {
      throw new InvalidArgumentException("hold_ms must be between " + MIN_HOLD_MS + " and " + MAX_HOLD_MS + ", got "
          + holdMs);
    }
    if (!dataset.isEmpty() && !DATASET.matcher(dataset).matches()) {
      throw new InvalidArgumentException("dataset is not a valid dataset name");
    }
    endCurrent();
    try {
      if (!store.gate().close(holdMs / 2)) {
        throw new BackendUnavailableException("writes in progress did not finish within " + holdMs / 2
            + " ms: no cut was made");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while closing the write gate");
    }
    // Crash note: from here until the gate opens, every write on this backend waits. The gate opens
    // on ThawWrites, on EndSnapshot, or when the timer below fires, even if the Logic Module is gone.
    try {
      SnapshotCut cut = new SnapshotCut(snapshotId, dataset.isEmpty() ? null : dataset, budgetBytes, staged.get());
      store.begin(cut);
      current = cut;
      thawTimer = timer.schedule(() -> openGate(snapshotId), holdMs, TimeUnit.MILLISECONDS);
      expiry = timer.schedule(() -> expire(snapshotId), START_WITHIN_MS, TimeUnit.MILLISECONDS);
      StoreStats stats = store.stats();
      return new Sizes(store.count(), stats.usedBytes());
    } catch (RuntimeException e) {
      endCurrent();
      throw e;
    }
  }

  /** Opens the write gate of snapshot {@code snapshotId} (backends only); a stale thaw does nothing. */
  public void thaw(Session caller, String snapshotId) {
    Permissions.requireBackend(caller, "ThawWrites");
    checkId(snapshotId);
    openGate(snapshotId);
  }

  /** Ends snapshot {@code snapshotId} here (backends only): the gate opens and no state is kept any more. */
  public synchronized void end(Session caller, String snapshotId) {
    Permissions.requireBackend(caller, "EndSnapshot");
    checkId(snapshotId);
    if (current != null && current.id().equals(snapshotId)) {
      endCurrent();
    }
  }

  /**
   * The master copies stored here as of the cut of {@code snapshotId} (administrators), read as the
   * iterator advances; once per snapshot. Call {@link #exported} when the stream ends, however it ends.
   */
  public synchronized Iterator<StoredObject> export(Session caller, String snapshotId) {
    if (!caller.admin() || caller.backend()) {
      throw new PermissionDeniedException("ExportObjects is for administrators; " + caller.username() + " is not one");
    }
    checkId(snapshotId);
    if (current == null || !current.id().equals(snapshotId)) {
      throw new InvalidArgumentException("snapshot_id: snapshot " + snapshotId + " is not open on this backend"
          + " (it ended, was given up, or this backend restarted since)");
    }
    if (exporting) {
      throw new InvalidArgumentException("snapshot_id: snapshot " + snapshotId + " is already being exported");
    }
    exporting = true;
    cancel(expiry);
    return new CutIterator(current);
  }

  /** The export of {@code snapshotId} ended (completed, failed or cancelled): its cut is dropped. */
  public synchronized void exported(String snapshotId) {
    if (current != null && current.id().equals(snapshotId)) {
      endCurrent();
    }
  }

  /** Ends whatever snapshot is open (the backend is stopping). */
  public synchronized void close() {
    endCurrent();
  }

  private synchronized void openGate(String snapshotId) {
    if (current != null && current.id().equals(snapshotId)) {
      store.gate().open();
    }
  }

  private synchronized void expire(String snapshotId) {
    if (current != null && current.id().equals(snapshotId) && !exporting) {
      LOG.warning("snapshot " + snapshotId + " was not exported within " + START_WITHIN_MS / 1000
          + " s of its cut: dropped");
      endCurrent();
    }
  }

  // guarded by this
  private void endCurrent() {
    if (current != null) {
      current.finish();
      store.end(current);
      current = null;
    }
    exporting = false;
    cancel(thawTimer);
    cancel(expiry);
    store.gate().open();
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }

  private static void checkId(String snapshotId) {
    if (!SNAPSHOT_ID.matcher(snapshotId).matches()) {
      throw new InvalidArgumentException("snapshot_id must be 32 lower-case hex digits");
    }
  }

  /** The cut's exportable objects in ID order, read one at a time. */
  private final class CutIterator implements Iterator<StoredObject> {
    private final SnapshotCut cut;
    private List<UUID> order;
    private int next;
    private StoredObject pending;

    CutIterator(SnapshotCut cut) {
      this.cut = cut;
    }

    @Override
    public boolean hasNext() {
      if (order == null) {
        order = cut.exportOrder(store.inner());
      }
      while (pending == null && next < order.size()) {
        pending = cut.take(order.get(next++), store.inner());
      }
      return pending != null;
    }

    @Override
    public StoredObject next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      StoredObject out = pending;
      pending = null;
      return out;
    }
  }
}
