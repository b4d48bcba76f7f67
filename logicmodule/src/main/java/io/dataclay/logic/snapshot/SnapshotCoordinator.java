package io.dataclay.logic.snapshot;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.backends.SnapshotCalls;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.metadata.MetadataStore;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Takes consistent snapshots of the cluster (docs/internals.md "Snapshots"), one at a time.
 *
 * <p>The cut: every live backend closes its write gate (its writes in flight finish, new ones
 * wait) and answers; once all have, the metadata's view is fixed, and the gates are opened again.
 * At that moment no backend could write, so the stores and the metadata together hold a state the
 * cluster was in. Each backend also opens its gate by itself {@code hold} after closing it (in case
 * this process dies or its thaw is slow to arrive): so the cut is only taken when every gate
 * closed, and the metadata was read, within 80 % of {@code hold} of the first freeze being sent;
 * otherwise the attempt is given up and tried again with twice the hold.
 */
public final class SnapshotCoordinator {
  /** The first attempt's hold; each retry doubles it. */
  static final long HOLD_MS = 2000;
  static final int ATTEMPTS = 3;
  /** A snapshot whose export shows no sign of life this long may be replaced by a new one. */
  static final long IDLE_MS = 10 * 60_000;
  private static final Logger LOG = Logger.getLogger(SnapshotCoordinator.class.getName());
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A backend in a snapshot, with what it stored at the cut. */
  public record Participant(BackendRecord backend, long objects, long bytes) {}

  /** A snapshot's cut: its ID, when it was fixed, how long writes waited at most, and its backends. */
  public record Cut(String id, long cutAtMs, long barrierMs, List<Participant> backends) {}

  /** What the metadata export of a snapshot reads. */
  public record MetadataView(Cut cut, String dataset, boolean passwordHashes, MetadataCut metadata) {}

  private final MetadataStore store;
  private final BackendRegistry backends;
  private final Supplier<SnapshotCalls> calls;
  private final Supplier<String> systemToken;
  private final Executor pool;
  private final Clock clock;
  // guarded by this
  private Active active;

  /** Snapshots of {@code store}, calling backends through {@code calls}. */
  public SnapshotCoordinator(MetadataStore store, BackendRegistry backends, Supplier<SnapshotCalls> calls,
      Supplier<String> systemToken, Executor pool, Clock clock) {
    this.store = store;
    this.backends = backends;
    this.calls = calls;
    this.systemToken = systemToken;
    this.pool = pool;
    this.clock = clock;
  }

  /**
   * Fixes the cut of a new snapshot (administrators) of every dataset, or of {@code dataset} only.
   *
   * @throws BackendUnavailableException when a backend holding objects is down, another snapshot
   *     is being exported, or no attempt could freeze every backend in time
   */
  public Cut begin(CallerSession caller, String dataset, boolean passwordHashes) {
    caller.requireAdmin("BeginSnapshot");
    if (dataset != null) {
      Checks.name("dataset", dataset);
      if (store.accounts().datasetOwner(dataset).isEmpty()) {
        throw new DatasetDoesNotExistException("dataset: '" + dataset + "' does not exist");
      }
    }
    synchronized (this) {
      if (active != null) {
        if (clock.millis() - active.touched < IDLE_MS) {
          throw new BackendUnavailableException("another snapshot (" + active.cut.id() + ") is being exported;"
              + " try again when it ends");
        }
        LOG.warning("snapshot " + active.cut.id() + " showed no sign of its export for " + IDLE_MS / 60_000
            + " min: replaced");
        endActive();
      }
      List<BackendRecord> live = backends.alive();
      Set<String> liveIds = new java.util.HashSet<>();
      live.forEach(b -> liveIds.add(b.id()));
      for (String holder : store.objects().backendsHoldingObjects()) {
        if (!liveIds.contains(holder)) {
          throw new BackendUnavailableException("backend " + holder + " holds objects but is not alive: its objects"
              + " cannot be read; start it again, then export");
        }
      }
      String id = HexFormat.of().formatHex(bytes16());
      DataClayException last = null;
      for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        try {
          active = attempt(id, live, dataset, passwordHashes, HOLD_MS << attempt);
          expireLater(id);
          return active.cut;
        } catch (DataClayException e) {
          last = e;
          LOG.warning("snapshot " + id + ": attempt " + (attempt + 1) + " to cut failed: " + e.getMessage());
        }
      }
      throw new BackendUnavailableException("no consistent cut could be made in " + ATTEMPTS + " attempts: "
          + last.getMessage());
    }
  }

  private Active attempt(String id, List<BackendRecord> live, String dataset, boolean hashes, long hold) {
    String token = systemToken.get();
    long started = System.nanoTime();
    List<CompletableFuture<SnapshotCalls.Frozen>> freezes = new ArrayList<>();
    for (BackendRecord b : live) {
      freezes.add(CompletableFuture.supplyAsync(
          () -> calls.get().freeze(b, id, hold, dataset == null ? "" : dataset, token), pool));
    }
    List<Participant> parts = new ArrayList<>();
    MetadataCut metadata = null;
    try {
      // every answer first (a failed one included), so that ending the attempt reaches no gate still closing
      CompletableFuture.allOf(freezes.toArray(new CompletableFuture<?>[0])).exceptionally(e -> null).join();
      for (int i = 0; i < live.size(); i++) {
        SnapshotCalls.Frozen f = joined(freezes.get(i), live.get(i));
        parts.add(new Participant(live.get(i), f.objects(), f.bytes()));
      }
      // Every gate is closed now: the metadata read from here on matches the stores.
      metadata = store.openCut();
      long cutAt = clock.millis();
      long elapsedMs = (System.nanoTime() - started) / 1_000_000;
      if (elapsedMs >= hold * 8 / 10) {
        throw new BackendUnavailableException("closing every backend's write gate took " + elapsedMs + " ms, too"
            + " close to the " + hold + " ms they stay closed");
      }
      for (BackendRecord b : live) {
        // no waiting: a backend that does not hear it opens by itself after the hold
        CompletableFuture.runAsync(() -> calls.get().thaw(b, id, token), pool).exceptionally(e -> null);
      }
      Cut cut = new Cut(id, cutAt, elapsedMs, parts);
      LOG.info("snapshot " + id + ": cut at " + cutAt + " on " + live.size() + " backend(s); writes waited at most "
          + elapsedMs + " ms");
      return new Active(cut, dataset, hashes, metadata, clock.millis());
    } catch (RuntimeException e) {
      if (metadata != null) {
        metadata.close();
      }
      endOn(live, id, token);
      throw e;
    }
  }

  /** The metadata view of snapshot {@code id} (administrators), once; {@link #metadataDone} when read. */
  public synchronized MetadataView metadata(CallerSession caller, String id) {
    caller.requireAdmin("ExportMetadata");
    Active a = require(id);
    if (a.metadata == null) {
      throw new InvalidArgumentException("snapshot_id: the metadata of snapshot " + id + " was already exported");
    }
    MetadataView view = new MetadataView(a.cut, a.dataset, a.hashes, a.metadata);
    a.metadata = null;
    a.touched = clock.millis();
    return view;
  }

  /** The metadata export of {@code view} ended; its view of the database is closed. */
  public void metadataDone(MetadataView view) {
    view.metadata().close();
    touch(view.cut().id());
  }

  /** Notes that the export of {@code id} is still going. */
  public synchronized void touch(String id) {
    if (active != null && active.cut.id().equals(id)) {
      active.touched = clock.millis();
    }
  }

  /** Ends snapshot {@code id} (administrators): every backend drops what it kept for it. */
  public synchronized void end(CallerSession caller, String id) {
    caller.requireAdmin("EndSnapshot");
    require(id);
    endActive();
  }

  // An export whose client died leaves its view of the metadata open (SQLite's log cannot be
  // checkpointed past it) and the backends' cuts: ended once it shows no sign of life for IDLE_MS.
  private void expireLater(String id) {
    CompletableFuture.delayedExecutor(IDLE_MS, TimeUnit.MILLISECONDS, pool).execute(() -> {
      synchronized (this) {
        if (active == null || !active.cut.id().equals(id)) {
          return;
        }
        if (clock.millis() - active.touched < IDLE_MS) {
          expireLater(id);
          return;
        }
        LOG.warning("snapshot " + id + " showed no sign of its export for " + IDLE_MS / 60_000 + " min: ended");
        endActive();
      }
    });
  }

  // guarded by this
  private void endActive() {
    if (active.metadata != null) {
      active.metadata.close();
    }
    List<BackendRecord> parts = new ArrayList<>();
    active.cut.backends().forEach(p -> parts.add(p.backend()));
    endOn(parts, active.cut.id(), systemToken.get());
    active = null;
  }

  private void endOn(List<BackendRecord> list, String id, String token) {
    for (BackendRecord b : list) {
      try {
        calls.get().endSnapshot(b, id, token);
      } catch (DataClayException e) {
        LOG.fine(() -> "backend " + b.name() + " did not end snapshot " + id + " (it drops it by itself): "
            + e.getMessage());
      }
    }
  }

  private Active require(String id) {
    if (active == null || !active.cut.id().equals(id)) {
      throw new InvalidArgumentException("snapshot_id: no snapshot " + id + " is open (it ended or was replaced)");
    }
    return active;
  }

  private static SnapshotCalls.Frozen joined(CompletableFuture<SnapshotCalls.Frozen> f, BackendRecord b) {
    try {
      return f.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof DataClayException d) {
        throw new BackendUnavailableException("backend " + b.name() + " (" + b.id() + ") did not freeze: "
            + d.getMessage());
      }
      throw e;
    }
  }

  private static byte[] bytes16() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return b;
  }

  /** The open snapshot. */
  private static final class Active {
    final Cut cut;
    final String dataset;
    final boolean hashes;
    MetadataCut metadata;
    long touched;

    Active(Cut cut, String dataset, boolean hashes, MetadataCut metadata, long touched) {
      this.cut = cut;
      this.dataset = dataset;
      this.hashes = hashes;
      this.metadata = metadata;
      this.touched = touched;
    }
  }
}
