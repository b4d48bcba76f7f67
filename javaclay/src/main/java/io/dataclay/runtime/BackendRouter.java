package io.dataclay.runtime;

import io.dataclay.api.BackendInfo;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.proto.ObjectInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Finds the backend of an object and calls it, keeping the Logic Module off the hot path: backends
 * and object locations are cached; a stale entry shows when a backend answers OBJECT_NOT_HERE or
 * cannot be reached, and is then refreshed from the Logic Module once. Thread-safe.
 */
final class BackendRouter implements AutoCloseable {
  private final LogicModuleClient lm;
  private final Supplier<String> token;
  private final Map<UUID, DataServiceClient> clients = new ConcurrentHashMap<>();
  private final Map<UUID, ObjectInfo> infos = new ConcurrentHashMap<>();
  private volatile Map<UUID, BackendInfo> backends = Map.of();

  BackendRouter(LogicModuleClient lm, Supplier<String> token) {
    this.lm = lm;
    this.token = token;
  }

  /** Backends by ID, from the Logic Module on first use or when {@code refresh}. */
  Map<UUID, BackendInfo> backends(boolean refresh) {
    if (refresh || backends.isEmpty()) {
      Map<UUID, BackendInfo> fresh = new HashMap<>();
      for (io.dataclay.proto.BackendInfo b : lm.getBackends()) {
        List<Language> languages = new ArrayList<>();
        for (io.dataclay.proto.Language l : b.getLanguagesList()) {
          if (l == io.dataclay.proto.Language.JAVA) {
            languages.add(Language.JAVA);
          } else if (l == io.dataclay.proto.Language.PYTHON) {
            languages.add(Language.PYTHON);
          }
        }
        UUID id = UUID.fromString(b.getId());
        fresh.put(id, new BackendInfo(id, b.getName(), b.getHost(), b.getPort(), languages, b.getAlive()));
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
  ObjectInfo objectInfo(UUID id, boolean refresh) {
    ObjectInfo info = refresh ? null : infos.get(id);
    if (info == null) {
      info = lm.getObjectInfo(id.toString());
      infos.put(id, info);
    }
    return info;
  }

  /** Caches metadata obtained elsewhere (by alias). */
  void remember(ObjectInfo info) {
    infos.put(UUID.fromString(info.getId()), info);
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
      throw new BackendDoesNotExistException("no backend " + backend + " is registered");
    }
    BackendInfo target = b;
    synchronized (this) {
      return clients.computeIfAbsent(backend, k -> new DataServiceClient(target.host(), target.port(), token));
    }
  }

  /** {@code op} on a backend; an unreachable one is looked up again and retried once when {@code idempotent}. */
  <T> T onBackend(UUID backend, boolean idempotent, Function<DataServiceClient, T> op) {
    try {
      return op.apply(dataService(backend));
    } catch (BackendUnavailableException e) {
      if (!idempotent) {
        throw e;
      }
      DataServiceClient stale = clients.remove(backend);
      if (stale != null) {
        stale.close();
      }
      backends(true);
      return op.apply(dataService(backend));
    }
  }

  /** {@code op} on the backend holding {@code obj}; OBJECT_NOT_HERE refreshes its location and retries once. */
  <T> T onObject(DataClayObject obj, boolean idempotent, Function<DataServiceClient, T> op) {
    ObjectState s = ObjectStates.of(obj);
    UUID backend = s.backend() != null ? s.backend()
        : UUID.fromString(objectInfo(s.id(), false).getMasterBackendId());
    try {
      return onBackend(backend, idempotent, op);
    } catch (ObjectNotHereException | BackendDoesNotExistException e) {
      UUID master = UUID.fromString(objectInfo(s.id(), true).getMasterBackendId());
      if (master.equals(backend)) {
        throw e;
      }
      ObjectStates.set(obj, new ObjectState(s.id(), master, s.proxy()));
      return onBackend(master, idempotent, op);
    }
  }

  @Override
  public synchronized void close() {
    clients.values().forEach(DataServiceClient::close);
    clients.clear();
  }
}
