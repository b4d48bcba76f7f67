package io.dataclay.runtime;

import io.dataclay.api.BackendInfo;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.api.StoredObject;
import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.TlsSettings;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Finds the backend of an object and calls it, keeping the Logic Module off the hot path: backends
 * and object locations are cached; a stale entry shows when a backend answers OBJECT_NOT_HERE or
 * cannot be reached, and is then refreshed from the Logic Module once and the call goes to the
 * master, then (failover) to each replica in turn: a replica serves reads and refuses writes, so
 * trying one never applies a change twice. Thread-safe.
 */
final class BackendRouter implements AutoCloseable {
  private final LogicModuleClient lm;
  private final Supplier<String> token;
  private final TlsSettings tls;
  private final Map<UUID, DataServiceClient> clients = new ConcurrentHashMap<>();
  private final Map<UUID, StoredObject> infos = new ConcurrentHashMap<>();
  private final Set<UUID> failing = ConcurrentHashMap.newKeySet();
  private volatile Map<UUID, BackendInfo> backends = Map.of();

  BackendRouter(LogicModuleClient lm, TlsSettings tls, Supplier<String> token) {
    this.lm = lm;
    this.tls = tls;
    this.token = token;
  }

  /** Backends by ID, from the Logic Module on first use or when {@code refresh}. */
  Map<UUID, BackendInfo> backends(boolean refresh) {
    if (refresh || backends.isEmpty()) {
      Map<UUID, BackendInfo> fresh = new HashMap<>();
      for (BackendInfo b : lm.backends()) {
        fresh.put(b.id(), b);
      }
      synchronized (this) {
        for (Map.Entry<UUID, DataServiceClient> c : new ArrayList<>(clients.entrySet())) {
          BackendInfo now = fresh.get(c.getKey());
          BackendInfo before = backends.get(c.getKey());
          if (now == null || before == null || !now.host().equals(before.host()) || now.port() != before.port()) {
            clients.remove(c.getKey()).close();
          }
        }
        backends = Map.copyOf(fresh);
      }
    }
    return backends;
  }

  /** A random live backend running Java objects. */
  UUID chooseBackend() {
    List<UUID> live = javaBackends(backends(false));
    if (live.isEmpty()) {
      live = javaBackends(backends(true));
    }
    if (live.isEmpty()) {
      throw new BackendUnavailableException("no live backend with a Java execution environment is registered");
    }
    return live.get(ThreadLocalRandom.current().nextInt(live.size()));
  }

  private static List<UUID> javaBackends(Map<UUID, BackendInfo> all) {
    return all.values().stream().filter(b -> b.alive() && b.languages().contains(Language.JAVA))
        .map(BackendInfo::id).toList();
  }

  /** What the Logic Module knows of an object (cached; asked again when {@code refresh}). */
  StoredObject objectInfo(UUID id, boolean refresh) {
    StoredObject info = refresh ? null : infos.get(id);
    if (info == null) {
      info = lm.getObjectInfo(id.toString());
      infos.put(id, info);
    }
    return info;
  }

  /** Caches metadata obtained elsewhere (by alias). */
  void remember(StoredObject info) {
    infos.put(info.id(), info);
  }

  /** The cached metadata of an object, or null. */
  StoredObject cached(UUID id) {
    return infos.get(id);
  }

  /** Drops the cached metadata of objects whose copies changed (asked again on next use). */
  void forget(Collection<UUID> ids) {
    ids.forEach(infos::remove);
  }

  /** Where calls on {@code obj} go first: its hint, else its master as cached (or asked once). */
  UUID firstBackend(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    return s.backend() != null ? s.backend() : master(objectInfo(s.id(), false));
  }

  /** Whether {@code backend} is registered, alive as of {@code known}, and answered this router's last call. */
  boolean reachable(UUID backend, Map<UUID, BackendInfo> known) {
    BackendInfo b = known.get(backend);
    return b != null && b.alive() && !failing.contains(backend);
  }

  /** Fails with BackendDoesNotExistException unless {@code backend} is registered (asked again on a miss). */
  void requireBackend(UUID backend) {
    if (!backends(false).containsKey(backend) && !backends(true).containsKey(backend)) {
      throw new BackendDoesNotExistException("no backend " + backend + " is registered (registered: "
          + backends(false).keySet() + ")");
    }
  }

  /** Every backend holding a copy in {@code info}, master first. */
  static List<UUID> copies(StoredObject info) {
    Set<UUID> out = new LinkedHashSet<>();
    out.add(master(info));
    out.addAll(info.replicaBackendIds());
    return List.copyOf(out);
  }

  static UUID master(StoredObject info) {
    if (info.backendId() == null) {
      throw new InternalException("the Logic Module names no master backend for object " + info.id());
    }
    return info.backendId();
  }

  /** The client of a backend's Data Service. */
  DataServiceClient dataService(UUID backend) {
    DataServiceClient c = clients.get(backend);
    if (c != null) {
      return c;
    }
    BackendInfo b = backends(false).get(backend);
    if (b == null) {
      b = backends(true).get(backend);
    }
    if (b == null) {
      throw new UnregisteredBackendException("no backend " + backend + " is registered");
    }
    BackendInfo target = b;
    synchronized (this) {
      return clients.computeIfAbsent(backend, k -> DataServiceClient.withCallPort(target.host(), target.port(), tls, token));
    }
  }

  /**
   * {@code op} on a backend. When it cannot serve (BACKEND_UNAVAILABLE) its channel is dropped and
   * its address asked again; the call is retried once when {@code idempotent}, or when it never
   * reached the backend (no connection could be made: it may have restarted on another port).
   * A BackendUnavailableException names the backend.
   */
  <T> T onBackend(UUID backend, boolean idempotent, Function<DataServiceClient, T> op) {
    try {
      return tryBackend(backend, idempotent, op);
    } catch (BackendUnavailableException e) {
      throw naming(e, backend);
    }
  }

  // The error, its message led by the backend it came from (name and address when known).
  private BackendUnavailableException naming(BackendUnavailableException e, UUID backend) {
    String message = String.valueOf(e.getMessage());
    if (message.contains(backend.toString())) {
      return e;
    }
    BackendInfo b = backends.get(backend);
    String where = b == null ? "backend " + backend
        : "backend " + b.name() + " (" + backend + ", " + b.host() + ":" + b.port() + ")";
    return new BackendUnavailableException(where + " is unavailable: " + message, e.connectFailed());
  }

  private <T> T tryBackend(UUID backend, boolean idempotent, Function<DataServiceClient, T> op) {
    T result;
    long started = System.nanoTime();
    try {
      result = op.apply(dataService(backend));
    } catch (BackendUnavailableException e) {
      reconnect(backend);
      // a backend that stayed silent for the unreachable time is not tried again at once: its
      // copies elsewhere are, within the same bound
      if (Channels.wentSilent(System.nanoTime() - started) || (!idempotent && !e.connectFailed())) {
        failing.add(backend);
        throw e;
      }
      try {
        result = op.apply(dataService(backend));
      } catch (BackendUnavailableException again) {
        failing.add(backend);
        throw again;
      }
    }
    failing.remove(backend);
    return result;
  }

  /**
   * {@code op} on the backend holding {@code obj} (its hint, else its master). When that backend
   * does not hold it (OBJECT_NOT_HERE, unregistered) or cannot serve it (BACKEND_UNAVAILABLE), the
   * object's location is asked again and the call goes to the master, then, if {@code replicas},
   * to each replica in turn. A master that answers becomes the object's hint.
   */
  <T> T onObject(DataClayObject obj, boolean idempotent, boolean replicas, Function<DataServiceClient, T> op) {
    ObjectState s = ObjectStates.of(obj);
    UUID first = firstBackend(obj);
    Map<UUID, DataClayException> failures = new LinkedHashMap<>();
    try {
      return onBackend(first, idempotent, op);
    } catch (ObjectNotHereException | UnregisteredBackendException | BackendUnavailableException e) {
      failures.put(first, e);
    }
    StoredObject info;
    try {
      info = objectInfo(s.id(), true);
    } catch (BackendUnavailableException lmDown) {
      // the Logic Module is unreachable too: the copies known before are all there is to try
      info = cached(s.id());
      if (info == null) {
        throw failures.get(first);
      }
    }
    List<UUID> candidates = replicas ? copies(info) : List.of(master(info));
    // Never the backend that just failed: a call that is not idempotent may have run on a master
    // that died before answering, and must not run there twice. A replica refuses state changes
    // (writes go to the master), so a call that fails on one changed nothing.
    for (UUID candidate : candidates) {
      if (candidate.equals(first)) {
        continue;
      }
      try {
        T result = onBackend(candidate, idempotent, op);
        if (candidate.equals(master(info))) {
          ObjectStates.set(obj, new ObjectState(s.id(), candidate, s.proxy()));
        }
        return result;
      } catch (ObjectNotHereException | UnregisteredBackendException | BackendUnavailableException e) {
        failures.put(candidate, e);
      }
    }
    throw mostTelling(s.id(), failures);
  }

  // What to raise when no copy could serve a call: a refusal or unavailability says more than "not
  // here" (a replica's "writes go to the master" more than the dead master's connection error),
  // with every backend's answer in the message when there were several.
  private static DataClayException mostTelling(UUID id, Map<UUID, DataClayException> failures) {
    UUID pick = failures.keySet().iterator().next();
    for (Map.Entry<UUID, DataClayException> e : failures.entrySet()) {
      if (e.getValue() instanceof BackendUnavailableException) {
        pick = e.getKey();
      }
    }
    if (failures.size() == 1) {
      return failures.get(pick);
    }
    StringBuilder m = new StringBuilder("no copy of object ").append(id).append(" could serve the call: backend ")
        .append(pick).append(": ").append(failures.get(pick).getMessage()).append(" (");
    String sep = "";
    for (Map.Entry<UUID, DataClayException> e : failures.entrySet()) {
      if (!e.getKey().equals(pick)) {
        m.append(sep).append("backend ").append(e.getKey()).append(": ").append(e.getValue().getMessage());
        sep = "; ";
      }
    }
    return GrpcErrors.forCode(failures.get(pick).code(), m.append(')').toString());
  }

  // Forgets the channel of a backend that failed and learns its (maybe new) address if the Logic Module answers.
  private void reconnect(UUID backend) {
    DataServiceClient stale = clients.remove(backend);
    if (stale != null) {
      stale.close();
    }
    try {
      backends(true);
    } catch (DataClayException e) {
      // the Logic Module is down too: the next call dials the address known before
    }
  }

  @Override
  public synchronized void close() {
    clients.values().forEach(DataServiceClient::close);
    clients.clear();
  }

  /** The backend a call was routed to is not registered (unlike a request naming an unknown target backend). */
  static final class UnregisteredBackendException extends BackendDoesNotExistException {
    UnregisteredBackendException(String message) {
      super(message);
    }
  }
}
