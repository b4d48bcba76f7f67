package io.dataclay.ds.registration;

import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.server.tracing.BatchSpans;
import io.dataclay.server.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Registers what this backend stores with the Logic Module before the call that stored it is
 * answered, so that an acknowledged object is always found. Each call's objects are one group,
 * which the Logic Module accepts or refuses as a unit (an ID registered elsewhere, a taken alias),
 * independently of the others. Group commit keeps this fast: groups wait in a queue while one
 * request is at the Logic Module, and the next request carries all of them (one round trip and
 * one metadata transaction for many calls); a lone call pays one round trip.
 *
 * <p>A caller stores first and registers second, and removes what it stored when its group is
 * refused. Crash note: a Data Service that dies in between leaves objects stored but never
 * registered, whose calls were never acknowledged; the next start re-registers what it stores
 * and removes those the Logic Module refuses ({@link Reconciliation}).
 */
public final class GroupCommitRegistrar implements LogicModuleGateway {
  private static final Logger LOG = Logger.getLogger(GroupCommitRegistrar.class.getName());
  /** Objects per Logic Module request; a group with more goes alone. */
  static final int MAX_OBJECTS = 10_000;
  /** How long a group waits for an unreachable Logic Module before its call fails. */
  public static final Duration UNAVAILABLE_WAIT = Duration.ofSeconds(10);
  private static final long RETRY_MAX_MS = 1_000;

  private final LogicModuleGateway lm;
  private final long waitNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private final Thread sender;
  private int inFlight;        // groups of the request at the Logic Module now
  private boolean closed;

  /** A group waiting, with the trace context of the call that submitted it. */
  private record Pending(RegistrationGroup group, CompletableFuture<Void> outcome, long since, Context trace) {}

  /** A registrar sending to {@code lm}, whose groups give up after {@link #UNAVAILABLE_WAIT}. */
  public GroupCommitRegistrar(LogicModuleGateway lm) {
    this(lm, UNAVAILABLE_WAIT);
  }

  /** A registrar sending to {@code lm}, whose groups give up on an unreachable Logic Module after {@code wait}. */
  public GroupCommitRegistrar(LogicModuleGateway lm, Duration wait) {
    this.lm = lm;
    this.waitNanos = wait.toNanos();
    this.sender = new Thread(this::run, "dataclay-ds-registrar");
    this.sender.setDaemon(true);
    this.sender.start();
  }

  @Override
  public Session validateSession(String token) {
    return lm.validateSession(token);
  }

  /**
   * Registers {@code objects}, stored here, as one group, with {@code alias} (when not null) given
   * to {@code aliasObjectId}. Never blocks. The future completes once the Logic Module accepted
   * them, or fails with why not: its refusal (nothing of the group is registered; the caller
   * removes what it stored), or BACKEND_UNAVAILABLE when the Logic Module stayed unreachable for
   * {@link #UNAVAILABLE_WAIT} or this registrar is closed. It completes on the registrar's thread:
   * what depends on it must not block.
   */
  public CompletableFuture<Void> register(List<StoredObject> objects, String alias, UUID aliasObjectId) {
    return submit(List.of(new RegistrationGroup(objects, alias, aliasObjectId))).get(0);
  }

  /**
   * Registers each group as {@link #register} does and waits for them all. Never throws: a group
   * the Logic Module could not take within {@link #UNAVAILABLE_WAIT} gets BACKEND_UNAVAILABLE.
   */
  @Override
  public List<Optional<DataClayException>> registerGroups(List<RegistrationGroup> groups) {
    List<CompletableFuture<Void>> futures = submit(groups);
    List<Optional<DataClayException>> outcomes = new ArrayList<>(futures.size());
    for (CompletableFuture<Void> f : futures) {
      try {
        f.join();
        outcomes.add(Optional.empty());
      } catch (CompletionException e) {
        outcomes.add(Optional.of(asDataClay(e.getCause())));
      }
    }
    return outcomes;
  }

  /** Groups waiting or at the Logic Module now. */
  public int pending() {
    lock.lock();
    try {
      return queue.size() + inFlight;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes no new group (they fail with BACKEND_UNAVAILABLE), sends what is queued, and waits up to
   * {@code wait} for the answers. True when every group submitted got its answer.
   */
  public boolean close(Duration wait) {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    try {
      sender.join(Math.max(1, wait.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    lock.lock();
    try {
      return !sender.isAlive() && queue.isEmpty() && inFlight == 0;
    } finally {
      lock.unlock();
    }
  }

  private List<CompletableFuture<Void>> submit(List<RegistrationGroup> groups) {
    List<CompletableFuture<Void>> futures = new ArrayList<>(groups.size());
    long now = System.nanoTime();
    Context trace = Context.current();
    lock.lock();
    try {
      boolean wasIdle = queue.isEmpty();
      for (RegistrationGroup g : groups) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        futures.add(f);
        if (closed) {
          f.completeExceptionally(new BackendUnavailableException("this backend is stopping or cannot register"
              + " objects: nothing was stored"));
        } else {
          queue.add(new Pending(g, f, now, trace));
        }
      }
      // the sender waits only for a first group; while a request is out, it takes the rest when back
      if (wasIdle && !queue.isEmpty()) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
    return futures;
  }

  private void run() {
    List<Pending> batch = List.of();
    try {
      while ((batch = take()) != null) {
        send(batch);
        lock.lock();
        try {
          inFlight = 0;
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    } catch (Throwable t) {
      // No call may wait forever for an answer that will not come: what was taken or queued fails,
      // and so does every group from now on (their callers remove what they stored).
      LOG.log(Level.SEVERE, "the registrar stopped: calls that make objects fail until this backend restarts", t);
      List<Pending> left = new ArrayList<>(batch == null ? List.of() : batch);
      lock.lock();
      try {
        closed = true;
        left.addAll(queue);
        queue.clear();
        inFlight = 0;
      } finally {
        lock.unlock();
      }
      BackendUnavailableException why = new BackendUnavailableException("this backend cannot register objects now ("
          + t + "): nothing was stored");
      left.forEach(p -> p.outcome().completeExceptionally(why));
    }
  }

  // The next request: every group waiting, up to MAX_OBJECTS objects (at least one group). Null
  // once closed with nothing left.
  private List<Pending> take() {
    lock.lock();
    try {
      while (queue.isEmpty()) {
        if (closed) {
          return null;
        }
        changed.awaitUninterruptibly();
      }
      List<Pending> batch = new ArrayList<>();
      int objects = 0;
      while (!queue.isEmpty()
          && (batch.isEmpty() || objects + queue.peek().group().objects().size() <= MAX_OBJECTS)) {
        Pending p = queue.poll();
        objects += p.group().objects().size();
        batch.add(p);
      }
      inFlight = batch.size();
      return batch;
    } finally {
      lock.unlock();
    }
  }

  // The request's span joins the trace of the first traced call it serves (and links the others),
  // and is current while it is sent: the Logic Module's span of it joins that trace too.
  private void send(List<Pending> batch) {
    Span span = BatchSpans.start(Tracing.current().tracer(), "ds.register_objects",
        batch.stream().map(Pending::trace).toList());
    try (Scope ignored = span.makeCurrent()) {
      sendInSpan(batch);
    } finally {
      span.end();
    }
  }

  private void sendInSpan(List<Pending> batch) {
    List<Pending> waiting = batch;
    long backoff = 20;
    while (true) {
      List<Optional<DataClayException>> outcomes;
      try {
        outcomes = lm.registerGroups(waiting.stream().map(Pending::group).toList());
      } catch (BackendUnavailableException | NotAuthenticatedException e) {
        // The Logic Module is down or restarting, or forgot this backend's session (the heartbeat
        // logs in again). It may have registered the request before the answer was lost: sending
        // it again is safe (registering alike from here changes nothing; an alias already naming
        // the object stays). Groups that waited too long fail instead, and their callers remove
        // what they stored.
        waiting = giveUpOnStale(waiting, e);
        if (waiting.isEmpty()) {
          return;
        }
        if (!RetryPause.pause(backoff)) {
          waiting.forEach(p -> p.outcome().completeExceptionally(e));
          return;
        }
        backoff = Math.min(RETRY_MAX_MS, backoff * 2);
        continue;
      } catch (RuntimeException e) {
        // the request as a whole was refused (a bug on one side): each of its groups fails with it
        DataClayException failure = asDataClay(e);
        LOG.log(Level.WARNING, "the Logic Module refused a registration request of " + waiting.size() + " groups",
            e);
        outcomes = waiting.stream().map(p -> Optional.of(failure)).toList();
      }
      // accepted ones first: a refused group's caller removes what it stored, which must not delay
      // the others
      for (int i = 0; i < waiting.size(); i++) {
        if (outcomes.get(i).isEmpty()) {
          waiting.get(i).outcome().complete(null);
        }
      }
      for (int i = 0; i < waiting.size(); i++) {
        outcomes.get(i).ifPresent(waiting.get(i).outcome()::completeExceptionally);
      }
      return;
    }
  }

  private List<Pending> giveUpOnStale(List<Pending> waiting, DataClayException why) {
    long now = System.nanoTime();
    List<Pending> still = new ArrayList<>(waiting.size());
    for (Pending p : waiting) {
      if (now - p.since() < waitNanos) {
        still.add(p);
      } else {
        p.outcome().completeExceptionally(new BackendUnavailableException("the Logic Module did not register the"
            + " objects within " + TimeUnit.NANOSECONDS.toSeconds(waitNanos) + " s (" + why.getMessage()
            + "): nothing was stored; retry"));
      }
    }
    return still;
  }

  private static DataClayException asDataClay(Throwable t) {
    return t instanceof DataClayException d ? d
        : new InternalException("registering with the Logic Module failed: " + t);
  }
}
