package storage;

import io.dataclay.api.DataClay;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.Runtimes;
import io.dataclay.exceptions.DataClayException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The COMPSs storage runtime interface over dataClay: the static methods the COMPSs runtime calls
 * (run with {@code runcompss --storage_conf=<client configuration file> --storage_impl=...} and
 * this jar on the class path). IDs are dataClay object IDs (canonical UUID text, what
 * {@code getID()} returns); host names map to backends as {@link BackendHosts} says. Every
 * failure is a {@link StorageException} whose cause is the dataClay error. Thread-safe.
 */
public final class StorageItf {
  private static final Logger LOG = Logger.getLogger(StorageItf.class.getName());
  /** How long {@link #finish()} waits for tasks still running before it abandons them. */
  private static final long FINISH_WAIT_SECONDS = 60;

  private static volatile ExecutorService tasks; // non-null while initialised; set under StorageItf.class

  private StorageItf() {}

  /**
   * Opens the dataClay session of this process from {@code storageConf}: a client configuration
   * file as {@link DataClay#init(Path)} reads it (KEY=VALUE lines: DATACLAY_HOST, DATACLAY_PORT,
   * DATACLAY_USER, DATACLAY_PASSWORD, DATACLAY_DATASET, ...; the DATACLAY_* environment wins). Null
   * or empty: $DATACLAY_HOME/client.properties and the environment.
   */
  public static synchronized void init(String storageConf) throws StorageException {
    if (tasks != null) {
      throw new StorageException("the storage interface is already initialised in this process: call "
          + "StorageItf.finish() first");
    }
    Path conf;
    try {
      conf = storageConf == null || storageConf.isBlank() ? null : Path.of(storageConf.strip());
    } catch (InvalidPathException e) {
      throw new StorageException("storage configuration '" + storageConf + "' is not a file path: " + e.getMessage());
    }
    try {
      DataClay.init(conf);
    } catch (DataClayException e) {
      throw new StorageException("cannot open the dataClay session"
          + (conf == null ? "" : " configured in " + conf) + ": " + e.getMessage(), e);
    }
    tasks = Executors.newCachedThreadPool(new TaskThreads());
  }

  /**
   * Waits (up to a minute) for the tasks still running, then closes the dataClay session. A no-op
   * when not initialised.
   */
  public static void finish() throws StorageException {
    ExecutorService running;
    synchronized (StorageItf.class) {
      running = tasks;
      tasks = null;
    }
    if (running == null) {
      return;
    }
    // Waited for without the lock: a task's callback may still call into this class meanwhile.
    running.shutdown();
    boolean drained;
    try {
      drained = running.awaitTermination(FINISH_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      drained = false;
    }
    if (!drained) {
      running.shutdownNow();
    }
    try {
      DataClay.finish();
    } catch (RuntimeException e) {
      throw new StorageException("closing the dataClay session failed: " + e.getMessage(), e);
    }
    if (!drained) {
      throw new StorageException("tasks were still running " + FINISH_WAIT_SECONDS
          + " s after finish() was called; they were interrupted and their results are lost");
    }
  }

  /** The host names of every backend holding a copy of object {@code id}, the master's first, each once. */
  public static List<String> getLocations(String id) throws StorageException {
    DataClayObject obj = getObject(id);
    return dataClay("locating object " + id, () -> BackendHosts.of(DataClay.getBackends())
        .hostsOf(obj.getAllLocations()));
  }

  /**
   * Copies object {@code id} and the objects it references to the backend {@code hostName} names
   * (a host, backend name or backend ID; null or empty: any backend without a copy). A backend on
   * that host without a copy is preferred; one that has a copy already makes this a no-op.
   */
  public static void newReplica(String id, String hostName) throws StorageException {
    DataClayObject obj = getObject(id);
    dataClay("replicating object " + id, () -> {
      UUID target = null;
      if (hostName != null && !hostName.isBlank()) {
        Set<UUID> holding = new HashSet<>(obj.getAllLocations());
        target = backendFor(hostName, b -> !holding.contains(b));
      }
      return obj.newReplica(target, true);
    });
  }

  /**
   * Creates a version of object {@code id} on the backend {@code hostName} names (null or empty:
   * next to the object; a backend on that host holding the object is preferred, so that no bytes
   * move) and returns the version's ID. The source always stays: it is the original, or an
   * intermediate version that nothing references once COMPSs moves on, which the garbage
   * collector removes ({@code preserveSource} is therefore accepted and needs no action).
   */
  public static String newVersion(String id, boolean preserveSource, String hostName) throws StorageException {
    DataClayObject obj = getObject(id);
    return dataClay("versioning object " + id, () -> {
      UUID target = null;
      if (hostName != null && !hostName.isBlank()) {
        Set<UUID> holding = new HashSet<>(obj.getAllLocations());
        target = backendFor(hostName, holding::contains);
      }
      DataClayObject version = obj.newVersion(target);
      return version.getID();
    });
  }

  /**
   * Makes the original object of version {@code idFinal} (the object the first of a chain of
   * versions was made from) hold the version's state, and retires the version.
   */
  public static void consolidateVersion(String idFinal) throws StorageException {
    DataClayObject version = getObject(idFinal);
    dataClay("consolidating version " + idFinal, () -> {
      version.consolidateVersion();
      return null;
    });
  }

  /** The object with ID {@code id}: a proxy of its model class (which must be on this process's class path). */
  public static Object getByID(String id) throws StorageException {
    return getObject(id);
  }

  /**
   * Runs, asynchronously, the method {@code descriptor} names (name and JVM descriptor, as COMPSs
   * builds it: {@code "wordCount()Ljava/util/HashMap;"}) on object {@code id} with arguments
   * {@code values}, in the backend holding the object (next to the data, whatever
   * {@code hostName} says). Returns the request ID at once; {@code callback} then gets one
   * {@link CallbackEvent} with that ID, for {@link #getResult}.
   */
  public static String executeTask(String id, String descriptor, Object[] values, String hostName,
      CallbackHandler callback) throws StorageException {
    if (callback == null) {
      throw new StorageException("callback is null: executeTask reports the task's end through it");
    }
    TaskDescriptor method = TaskDescriptor.parse(descriptor);
    Object[] args = values == null ? new Object[0] : values.clone();
    method.checkArguments(args.length);
    DataClayObject target = getObject(id);
    String requestId = UUID.randomUUID().toString();
    ExecutorService pool = tasks;
    if (pool == null) {
      throw notInitialised();
    }
    try {
      pool.execute(() -> run(requestId, target, method, args, callback));
    } catch (RejectedExecutionException finishing) {
      throw notInitialised(); // finish() ran since the check
    }
    return requestId;
  }

  /** The result in {@code event} (SUCCESS); the task's error, as a StorageException, for FAIL. */
  public static Object getResult(CallbackEvent event) throws StorageException {
    if (event == null || event.getType() == null) {
      throw new StorageException("the callback event is " + (event == null ? "null" : "missing its type"));
    }
    if (event.getType() == CallbackEvent.EventType.SUCCESS) {
      return event.getContent();
    }
    Object error = event.getContent();
    StorageException failure = new StorageException("task " + event.getRequestID() + " failed"
        + (error instanceof Throwable t ? ": " + t : ""));
    if (error instanceof Throwable t) {
      failure.initCause(t);
    }
    throw failure;
  }

  // The task itself, on a thread of the pool: its outcome always reaches the callback.
  private static void run(String requestId, DataClayObject target, TaskDescriptor method, Object[] args,
      CallbackHandler callback) {
    CallbackEvent event;
    try {
      Object result = Runtimes.current().callMethod(target, method.wireName(), args);
      event = new CallbackEvent(requestId, CallbackEvent.EventType.SUCCESS, result);
    } catch (Throwable t) { // model exceptions may be checked ones, rethrown unchanged by the runtime
      event = new CallbackEvent(requestId, CallbackEvent.EventType.FAIL, t);
    }
    try {
      callback.eventListener(event);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "the COMPSs callback of task " + requestId + " failed", e);
    }
  }

  private static DataClayObject getObject(String id) throws StorageException {
    UUID oid = parseId(id);
    if (tasks == null) {
      throw notInitialised();
    }
    return dataClay("getting object " + id, () -> DataClay.getByID(oid));
  }

  /** {@code id} as an object ID; StorageException unless it is a UUID in canonical text. */
  static UUID parseId(String id) throws StorageException {
    if (id == null || id.isBlank()) {
      throw new StorageException("object ID is empty");
    }
    try {
      UUID oid = UUID.fromString(id.strip());
      if (oid.toString().equals(id.strip().toLowerCase(Locale.ROOT))) {
        return oid;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw new StorageException("'" + id + "' is not a dataClay object ID (a UUID such as "
        + "123e4567-e89b-12d3-a456-426614174000)");
  }

  private static UUID backendFor(String hostName, Predicate<UUID> preferred) throws StorageException {
    return BackendHosts.of(DataClay.getBackends()).pick(hostName, preferred);
  }

  private static StorageException notInitialised() {
    return new StorageException("the storage interface is not initialised: call StorageItf.init(storageConf) first");
  }

  /** Work on dataClay; its dataClay errors become StorageExceptions. */
  private interface Work<T> {
    T run() throws StorageException;
  }

  private static <T> T dataClay(String what, Work<T> work) throws StorageException {
    try {
      return work.run();
    } catch (DataClayException e) {
      throw new StorageException(what + ": " + e.getMessage(), e);
    }
  }

  // Daemon threads, so that a program that never calls finish() still exits.
  private static final class TaskThreads implements ThreadFactory {
    private final AtomicInteger count = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, "storageitf-task-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }
}
