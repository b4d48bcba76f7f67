package io.dataclay.ds.ee.java;

import io.dataclay.api.BackendInfo;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectRuntime;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.common.Language;
import io.dataclay.ds.environments.SequencedDelta;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.serialization.EncodedField;
import io.dataclay.serialization.Instances;
import io.dataclay.serialization.ModelFields;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * One top-level call in the Java environment, on one thread: the objects it loaded from the store
 * (each once, so nested calls on the same object share its instance), the objects it made
 * persistent, and, when it ends, the changes to hand to the ResultApplier. It is also the runtime
 * model code sees during the call: a method called on a proxy of an object stored here runs here,
 * on the loaded instance; other objects are reached through their backend.
 */
final class CallContext implements References, ObjectRuntime {
  private record Loaded(DataClayObject instance, Map<String, FieldValue> stored) {}

  private final CallHost env;
  private final DeployedModels models;
  private final ObjectCodec codec;
  private final Session session;
  private final Map<UUID, Loaded> loaded = new LinkedHashMap<>();
  private final Map<UUID, DataClayObject> proxies = new HashMap<>();
  private final Map<UUID, DataClayObject> created = new LinkedHashMap<>();
  private final ArrayDeque<DataClayObject> toEncode = new ArrayDeque<>();

  CallContext(CallHost env, DeployedModels models, Session session) {
    this.env = env;
    this.models = models;
    this.codec = models.codec();
    this.session = session;
  }

  ObjectCodec codec() {
    return codec;
  }

  /** The instance of a stored object for this call, loaded on first use. */
  DataClayObject load(UUID id) {
    Loaded l = loaded.get(id);
    if (l != null) {
      return l.instance();
    }
    StoredObject stored = env.stored(id).orElseThrow(
        () -> new ObjectNotHereException("object " + id + " is not stored on this backend"));
    ObjectHeader h = stored.header();
    Permissions.check(session, id, h);
    if (h.language() != Language.JAVA) {
      throw new InvalidArgumentException("object " + id + " is a " + h.language() + " object, not a Java one");
    }
    DataClayObject instance = Instances.of(models.modelClass(h.className()));
    ObjectStates.set(instance, new ObjectState(id, env.backendId(), false));
    loaded.put(id, new Loaded(instance, stored.fields()));
    Map<String, byte[]> values = new LinkedHashMap<>();
    stored.fields().forEach((k, v) -> values.put(k, v.value()));
    codec.decodeFields(instance, values, this);
    return instance;
  }

  /** Runs {@code method} on a loaded instance; the model's own exception propagates unwrapped. */
  Object invoke(DataClayObject instance, Method method, Object[] args) throws Throwable {
    if (args.length != method.getParameterCount()) {
      throw new InvalidArgumentException(method.getName() + " takes " + method.getParameterCount()
          + " arguments, got " + args.length);
    }
    try {
      return method.invoke(instance, args);
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException("arguments of " + method.getDeclaringClass().getName() + "." + method.getName()
          + " do not match " + Arrays.toString(method.getParameterTypes()) + ": " + e.getMessage());
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * The call's state changes: new objects (in the session's dataset) and, per loaded object, the
   * fields whose encoding changed. Objects first reached while encoding are made persistent too.
   */
  Changes changes(LongSupplier sequence) {
    List<SequencedDelta> deltas = new ArrayList<>();
    for (Map.Entry<UUID, Loaded> e : new ArrayList<>(loaded.entrySet())) {
      Map<String, FieldValue> changed = new LinkedHashMap<>();
      Map<String, EncodedField> now = codec.encodeFields(e.getValue().instance(), this);
      Map<String, FieldValue> before = e.getValue().stored();
      for (Map.Entry<String, EncodedField> f : now.entrySet()) {
        FieldValue old = before.get(f.getKey());
        if (old == null || !Arrays.equals(old.value(), f.getValue().value())) {
          changed.put(f.getKey(), stored(f.getValue()));
        }
      }
      if (!changed.isEmpty()) {
        deltas.add(new SequencedDelta(new ObjectDelta(e.getKey(), changed, Set.of()), sequence.getAsLong()));
      }
    }
    List<StoredObject> fresh = new ArrayList<>();
    while (!toEncode.isEmpty()) {
      DataClayObject obj = toEncode.poll();
      Map<String, FieldValue> fields = new LinkedHashMap<>();
      codec.encodeFields(obj, this).forEach((k, v) -> fields.put(k, stored(v)));
      fresh.add(new StoredObject(obj.getObjectId(),
          ObjectHeader.of(obj.getClass().getName(), Language.JAVA, session.dataset()), fields));
    }
    return new Changes(fresh, deltas);
  }

  /** Objects a call made persistent and deltas of the objects it changed. */
  record Changes(List<StoredObject> created, List<SequencedDelta> deltas) {}

  static FieldValue stored(EncodedField f) {
    return new FieldValue(f.value(), f.references());
  }

  // ---- References: model objects inside values -------------------------------------------------

  @Override
  public UUID encode(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    if (s != null) {
      return s.id();
    }
    if (!models.contains(obj.getClass())) {
      throw new InvalidArgumentException("a " + obj.getClass().getName() + " cannot be stored here: its class is "
          + "not part of a Java model deployed on this backend");
    }
    UUID id = UUID.randomUUID();
    ObjectStates.set(obj, new ObjectState(id, env.backendId(), false));
    created.put(id, obj);
    toEncode.add(obj);
    return id;
  }

  @Override
  public DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID backend) {
    Loaded l = loaded.get(id);
    if (l != null) {
      return l.instance();
    }
    DataClayObject mine = created.get(id);
    if (mine != null) {
      return mine;
    }
    return proxies.computeIfAbsent(id, k -> {
      DataClayObject proxy = Instances.of(type);
      ObjectStates.set(proxy, new ObjectState(id, backend, true));
      return proxy;
    });
  }

  // ---- ObjectRuntime: what model code reaches during the call -----------------------------------

  @Override
  public Object callMethod(DataClayObject target, String method, Object[] args) {
    UUID id = target.getObjectId();
    if (storedHere(id)) {
      DataClayObject instance = load(id);
      try {
        return invoke(instance, MethodTable.find(instance.getClass(), method), args);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable checked) {
        throw JavaCalls.sneaky(checked);
      }
    }
    return env.remote().callMethod(session, codec, this, target, method, args);
  }

  @Override
  public Object getField(DataClayObject target, String field) {
    UUID id = target.getObjectId();
    if (storedHere(id)) {
      DataClayObject instance = load(id);
      try {
        return ModelFields.named(instance.getClass(), field).get(instance);
      } catch (IllegalAccessException e) {
        throw new InvalidArgumentException("cannot read field " + field + ": " + e.getMessage());
      }
    }
    return env.remote().getField(session, codec, this, target, field);
  }

  @Override
  public void setField(DataClayObject target, String field, Object value) {
    UUID id = target.getObjectId();
    if (storedHere(id)) {
      DataClayObject instance = load(id); // stored with the call's other changes when it ends
      try {
        ModelFields.named(instance.getClass(), field).set(instance, value);
      } catch (IllegalAccessException | IllegalArgumentException e) {
        throw new InvalidArgumentException("cannot assign field " + field + ": " + e.getMessage());
      }
      return;
    }
    env.remote().setField(session, codec, this, target, field, value);
  }

  // Whether the object is stored on this backend (loaded by this call, or in the store).
  private boolean storedHere(UUID id) {
    return loaded.containsKey(id) || env.storedHere(id);
  }

  @Override
  public void makePersistent(DataClayObject obj, String alias, UUID backendId, boolean recursive) {
    if (alias != null || (backendId != null && !backendId.equals(env.backendId()))) {
      throw new InvalidArgumentException("inside a backend, makePersistent takes no alias and no other backend: "
          + "the object is stored here with the call (give it an alias from a client)");
    }
    encode(obj);
  }

  @Override
  public <T extends DataClayObject> T getByAlias(Class<T> type, String alias, String dataset) {
    throw new InvalidArgumentException("getByAlias is not available inside a Java method running in a backend; "
        + "pass the object as an argument instead");
  }

  @Override
  public void deleteAlias(String alias, String dataset) {
    throw new InvalidArgumentException("deleteAlias is not available inside a Java method running in a backend");
  }

  @Override
  public void deleteAliases(DataClayObject obj) {
    throw clientSideOnly("deletePersistent");
  }

  @Override
  public UUID getLocation(DataClayObject obj) {
    UUID id = obj.getObjectId();
    if (created.containsKey(id) || storedHere(id)) {
      return env.backendId();
    }
    ObjectState s = ObjectStates.of(obj);
    if (s.backend() == null) {
      throw new ObjectNotHereException(
          "object " + id + " is not stored on this backend and its location is unknown here");
    }
    return s.backend();
  }

  @Override
  public List<UUID> getAllLocations(DataClayObject obj) {
    return List.of(getLocation(obj));
  }

  @Override
  public Map<UUID, BackendInfo> getBackends() {
    throw new InvalidArgumentException("getBackends is not available inside a Java method running in a backend");
  }

  // Copies, versions and moves change where objects live while this call may hold them loaded:
  // only a client (outside any backend) may ask for them.

  @Override
  public UUID newReplica(DataClayObject obj, UUID backendId, boolean recursive) {
    throw clientSideOnly("newReplica");
  }

  @Override
  public <T extends DataClayObject> T newVersion(T obj, UUID backendId) {
    throw clientSideOnly("newVersion");
  }

  @Override
  public void consolidateVersion(DataClayObject version) {
    throw clientSideOnly("consolidateVersion");
  }

  @Override
  public void move(DataClayObject obj, UUID backendId, boolean recursive) {
    throw clientSideOnly("move");
  }

  @Override
  public DataClayObject getByID(UUID id) {
    throw clientSideOnly("getByID");
  }

  private static InvalidArgumentException clientSideOnly(String operation) {
    return new InvalidArgumentException(operation + " is client-side only: it is not available inside a Java "
        + "method running in a backend; call it from a client program");
  }
}
