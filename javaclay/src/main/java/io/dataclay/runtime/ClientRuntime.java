package io.dataclay.runtime;

import io.dataclay.api.BackendInfo;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectRuntime;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.client.Channels;
import io.dataclay.api.AliasInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.client.Copies;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.client.NewObject;
import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.serialization.ModelClassPolicy;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Logger;

/**
 * The Java client runtime: one Logic Module session and the caches that keep warm calls off the
 * Logic Module. Model objects delegate to it (through {@link io.dataclay.api.Runtimes}). Thread-safe.
 */
public final class ClientRuntime implements ObjectRuntime, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(ClientRuntime.class.getName());

  private final LogicModuleClient lm;
  private final BackendRouter router;
  private final ObjectCodec codec;
  private final ClientModelClasses classes;
  private final ClassLoader loader;
  private final References proxies = new References() {
    @Override
    public UUID encode(DataClayObject obj) {
      ObjectState s = ObjectStates.of(obj);
      if (s == null) {
        throw new InvalidArgumentException("a volatile " + obj.getClass().getName() + " cannot be sent here");
      }
      return s.id();
    }

    @Override
    public DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID backend) {
      return Proxies.of(type, id, backend);
    }
  };
  private volatile String token;

  /** Opens a session as {@code config} says, with model classes loaded through {@code loader}. */
  public ClientRuntime(ClientConfig config, ClassLoader loader) {
    Channels.unreachableAfter(config.unreachableMs());
    this.lm = new LogicModuleClient(config.host(), config.port(), config.tls(), () -> token);
    this.classes = new ClientModelClasses(loader);
    this.loader = loader;
    this.codec = new ObjectCodec(new ModelClassPolicy(classes, config.extraClasses(), loader));
    this.router = new BackendRouter(lm, config.tls(), () -> token);
    try {
      this.token = lm.newSession(config.user(), config.password(), config.dataset()).token();
      router.backends(true);
    } catch (RuntimeException e) {
      router.close();
      lm.close();
      throw e;
    }
  }

  @Override
  public Object callMethod(DataClayObject target, String method, Object[] args) {
    byte[] payload = encodeValue(args, router.firstBackend(target));
    byte[] result;
    try {
      result = router.onObject(target, false, true, ds -> ds.callMethod(target.getID(), method, payload));
    } catch (RemoteException e) {
      throw RemoteExceptions.rebuild(e, loader);
    }
    return codec.decode(result, proxies, "result of " + target.getClass().getName() + "." + method);
  }

  @Override
  public Object getField(DataClayObject target, String field) {
    byte[] value = router.onObject(target, true, true, ds -> ds.getField(target.getID(), field));
    return codec.decode(value, proxies, "field " + target.getClass().getName() + "." + field);
  }

  @Override
  public void setField(DataClayObject target, String field, Object value) {
    byte[] encoded = encodeValue(value, router.firstBackend(target));
    router.onObject(target, false, false, ds -> {
      ds.setField(target.getID(), field, encoded);
      return null;
    });
  }

  // Volatile model objects in the value are stored first, on the target's backend.
  private byte[] encodeValue(Object value, UUID backend) {
    GraphWriter volatiles = new GraphWriter(codec, backend, true, proxies);
    byte[] payload = codec.encode(value, volatiles).value();
    if (!volatiles.isEmpty()) {
      List<NewObject> records = volatiles.drain();
      router.onBackend(backend, false, ds -> {
        ds.makePersistentObjects(records, null);
        return null;
      });
      volatiles.commit();
    }
    return payload;
  }

  @Override
  public void makePersistent(DataClayObject obj, String alias, UUID backendId, boolean recursive) {
    if (alias != null && alias.isEmpty()) {
      throw new InvalidArgumentException("alias is empty: pass null for no alias");
    }
    if (obj.isPersistent()) {
      if (alias != null) {
        lm.newAlias(alias, obj.getID());
      }
      return;
    }
    UUID backend = backendId != null ? backendId : router.chooseBackend();
    GraphWriter writer = new GraphWriter(codec, backend, recursive, proxies);
    List<NewObject> records = writer.write(obj);
    router.onBackend(backend, false, ds -> {
      ds.makePersistentObjects(records, alias);
      return null;
    });
    writer.commit();
  }

  @Override
  public <T extends DataClayObject> T getByAlias(Class<T> type, String alias, String dataset) {
    if (alias == null || alias.isEmpty()) {
      throw new InvalidArgumentException("alias is empty");
    }
    StoredObject info;
    try {
      info = lm.getObjectByAlias(alias, dataset);
    } catch (AliasDoesNotExistException e) {
      throw e.getMessage().contains(alias) ? e
          : new AliasDoesNotExistException("alias '" + alias + "' does not exist: " + e.getMessage());
    }
    return proxy(type, info, "alias '" + alias + "' names");
  }

  @Override
  public DataClayObject getByID(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is null");
    }
    return proxy(DataClayObject.class, router.objectInfo(id, false), "object " + id + " is");
  }

  // A proxy of the object {@code info} describes ({@code what}: how the caller named it), checked to be a {@code type}.
  private <T extends DataClayObject> T proxy(Class<T> type, StoredObject info, String what) {
    router.remember(info);
    if (info.language() != Language.JAVA) {
      throw new InvalidArgumentException(what + " a " + info.language() + " object (" + info.className()
          + "), not a Java one");
    }
    Class<?> c = classes.find(info.className());
    if (c == null) {
      throw new ClassNotRegisteredException(what + " a " + info.className()
          + ", which is not a model class this program can load (dataclaycmd GetStubs writes it)");
    }
    if (!type.isAssignableFrom(c)) {
      throw new InvalidArgumentException(what + " a " + info.className() + ", which is not a " + type.getName());
    }
    return Proxies.of(c.asSubclass(type), info.id(), BackendRouter.master(info));
  }

  @Override
  public void deleteAlias(String alias, String dataset) {
    lm.deleteAlias(alias, dataset);
  }

  @Override
  public void deleteAliases(DataClayObject obj) {
    StoredObject info = router.objectInfo(obj.getObjectId(), true);
    for (String alias : info.aliases()) {
      try {
        lm.deleteAlias(alias, info.dataset());
      } catch (AliasDoesNotExistException gone) {
        // removed meanwhile by somebody else: what was asked for holds
      }
    }
  }

  // Asks the Logic Module (so moves and replicas made by anyone show); with it down, the hint.
  // Any live copy may be the answer: callers that need the master use getAllLocations().get(0).
  @Override
  public UUID getLocation(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    List<UUID> copies;
    Map<UUID, BackendInfo> backends;
    try {
      copies = BackendRouter.copies(router.objectInfo(s.id(), true));
      backends = router.backends(true);
    } catch (BackendUnavailableException lmDown) {
      return router.firstBackend(obj);
    }
    if (!copies.get(0).equals(s.backend())) {
      ObjectStates.set(obj, new ObjectState(s.id(), copies.get(0), s.proxy()));
    }
    // the white paper's definition: one of the object's live locations, at random
    List<UUID> live = new ArrayList<>();
    for (UUID b : copies) {
      if (router.reachable(b, backends)) {
        live.add(b);
      }
    }
    return live.isEmpty() ? copies.get(0) : live.get(ThreadLocalRandom.current().nextInt(live.size()));
  }

  @Override
  public List<UUID> getAllLocations(DataClayObject obj) {
    return BackendRouter.copies(router.objectInfo(obj.getObjectId(), true));
  }

  @Override
  public UUID newReplica(DataClayObject obj, UUID backendId, boolean recursive) {
    if (backendId != null) {
      router.requireBackend(backendId);
    }
    UUID id = obj.getObjectId();
    // Naming the target makes a retry harmless (a backend already holding a copy is a no-op).
    Copies copied = router.onObject(obj, backendId != null, false,
        ds -> ds.newReplica(List.of(id.toString()), backendId == null ? null : backendId.toString(), recursive));
    forgetCopied(id, copied);
    return copied.backendId();
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends DataClayObject> T newVersion(T obj, UUID backendId) {
    if (backendId != null) {
      router.requireBackend(backendId);
    }
    String id = obj.getID();
    StoredObject version = router.onObject(obj, false, false,
        ds -> ds.newVersion(id, backendId == null ? null : backendId.toString())).version();
    router.remember(version);
    return Proxies.of((Class<T>) obj.getClass(), version.id(), BackendRouter.master(version));
  }

  @Override
  public void consolidateVersion(DataClayObject version) {
    UUID id = version.getObjectId();
    StoredObject known = router.cached(id);
    router.onObject(version, false, false, ds -> {
      ds.consolidateVersion(id.toString());
      return null;
    });
    List<UUID> changed = new ArrayList<>(List.of(id));
    if (known != null && known.versionOf() != null) {
      changed.add(known.versionOf());
    }
    router.forget(changed);
  }

  @Override
  public void move(DataClayObject obj, UUID backendId, boolean recursive) {
    if (backendId == null) {
      throw new InvalidArgumentException("backendId is null: move needs the backend to move the object to");
    }
    router.requireBackend(backendId);
    ObjectState s = ObjectStates.of(obj);
    Copies moved = router.onObject(obj, false, false,
        ds -> ds.move(List.of(s.id().toString()), backendId.toString(), recursive));
    forgetCopied(s.id(), moved);
    ObjectStates.set(obj, new ObjectState(s.id(), backendId, s.proxy()));
  }

  private void forgetCopied(UUID id, Copies copied) {
    List<UUID> changed = new ArrayList<>(List.of(id));
    changed.addAll(copied.objectIds());
    router.forget(changed);
  }

  @Override
  public Map<UUID, BackendInfo> getBackends() {
    return router.backends(true);
  }

  @Override
  public Stream<DatasetInfo> listDatasets(boolean countObjects) {
    return Listings.datasets(lm, countObjects);
  }

  @Override
  public Stream<AliasInfo> listAliases(String pattern, String dataset) {
    return Listings.aliases(lm, pattern, dataset);
  }

  @Override
  public Stream<StoredObject> listObjects(String className, String dataset) {
    return Listings.objects(lm, className, dataset);
  }

  /** Closes the session (best effort) and every channel. */
  @Override
  public void close() {
    try {
      lm.closeSession();
    } catch (DataClayException e) {
      LOG.fine("could not close the session: " + e.getMessage());
    } finally {
      token = null;
      router.close();
      lm.close();
    }
  }
}
