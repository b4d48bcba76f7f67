package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.QuotaExceededException;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The execution environments of one language on this backend: a confined process per account
 * (started at its first call, stopped after {@link EnvironmentSettings#idleMs()} without calls),
 * so no model code ever runs beside another account's calls, tokens or objects. At most
 * {@link EnvironmentSettings#maxProcesses()} run; a new account then takes the place of the one
 * idle longest, or is refused with QUOTA_EXCEEDED while every one is busy.
 */
public final class EnvironmentPool implements ExecutionEnvironment {
  private static final Logger LOG = Logger.getLogger(EnvironmentPool.class.getName());
  private static final long SWEEP_MS = 10_000;

  private final Language language;
  private final EnvironmentLaunch launch;
  private final LinkServices services;
  private final EnvironmentSettings settings;
  private final long waitMs;
  private final Path tmpRoot;
  private final BiPredicate<Session, ModelBundle> usable;
  private final Map<String, AccountEnvironment> byAccount = new ConcurrentHashMap<>();
  private final Map<String, ModelBundle> models = new LinkedHashMap<>();
  private final BitSet slots = new BitSet();
  private final ObjectTurns<Turned> turns = new ObjectTurns<>();
  private AccountEnvironment spare;
  private final ScheduledFuture<?> sweeper;
  private int restartsOfStopped;
  private long callsOfStopped;
  private volatile String lastProblem = "";
  private boolean closed;

  /**
   * A pool started as {@code launch} says, whose processes' private directories live under {@code
   * tmpRoot}; an account's process gets the models {@code usable} accepts for its session.
   */
  public EnvironmentPool(EnvironmentLaunch launch, LinkServices services, EnvironmentSettings settings, long waitMs,
      Path tmpRoot, BiPredicate<Session, ModelBundle> usable) throws IOException {
    this.language = launch.language();
    this.launch = launch;
    this.services = services;
    this.settings = settings;
    this.waitMs = waitMs;
    this.tmpRoot = tmpRoot;
    this.usable = usable;
    prepareRoot();
    this.sweeper = services.timer().scheduleWithFixedDelay(this::stopIdle, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
    services.timer().execute(this::refillSpare);
  }

  @Override
  public Language language() {
    return language;
  }

  /** A call waiting for its object's turn. */
  private record Turned(AccountEnvironment env, ExecutionRequest request, CompletableFuture<byte[]> future) {}

  /**
   * Runs the call in its account's process. A client's call waits while calls of another account
   * run on the same object (see {@link ObjectTurns}); a call model code made (nested) does not.
   */
  @Override
  public CompletableFuture<byte[]> execute(ExecutionRequest request) {
    AccountEnvironment env = byAccount.get(request.session().username());
    if (env == null) {
      try {
        env = environmentOf(request.session());
      } catch (BackendUnavailableException | QuotaExceededException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    if (request.nested()) {
      return env.execute(request);
    }
    Turned call = new Turned(env, request, new CompletableFuture<>());
    if (turns.tryRun(request.objectId(), env, call)) {
      run(call);
    }
    return call.future();
  }

  private void run(Turned call) {
    call.env().execute(call.request()).whenComplete((value, error) -> {
      for (Turned next : turns.done(call.request().objectId())) {
        run(next);
      }
      if (error != null) {
        call.future().completeExceptionally(error);
      } else {
        call.future().complete(value);
      }
    });
  }

  private AccountEnvironment environmentOf(Session session) {
    String account = session.username();
    AccountEnvironment stopped = null;
    AccountEnvironment env;
    boolean fresh;
    synchronized (this) {
      if (closed) {
        throw new BackendUnavailableException("the Data Service is shutting down");
      }
      env = byAccount.get(account);
      if (env != null) {
        return env;
      }
      if (byAccount.size() >= settings.maxProcesses()) {
        stopped = idlest().orElseThrow(() -> new QuotaExceededException("this backend runs "
            + settings.maxProcesses() + " " + language + " execution environments, one per account, all busy ("
            + EnvironmentSettings.MAX_PROCESSES + "); retry shortly"));
        forget(stopped);
      }
      fresh = spare == null;
      env = fresh ? newEnvironment(session) : spare;
      spare = null;
      env.adopt(session);
      env.deploy(usableBy(session));
      byAccount.put(account, env);
    }
    if (stopped != null) {
      LOG.info("stopping the idle " + language + " execution environment of " + stopped.account() + " to start "
          + account + "'s");
      stopped.close();
    }
    if (fresh) {
      start(env);
    }
    services.timer().execute(this::refillSpare);
    return env;
  }

  // Called with the pool's lock held.
  private AccountEnvironment newEnvironment(Session session) {
    int slot = slots.nextClearBit(0);
    slots.set(slot);
    return new AccountEnvironment(session, language, slot, services, settings, waitMs);
  }

  private void start(AccountEnvironment env) {
    Path tmp = tmpRoot.resolve(language.name().toLowerCase() + "-" + env.slot());
    try {
      recreate(tmp);
    } catch (IOException e) {
      lastProblem = "its private directory " + tmp + " could not be made: " + e.getMessage();
    }
    env.start(launch, tmp.toString());
  }

  /**
   * Starts a spare process when there is none and one is wanted: Python's always, Java's once a
   * Java model is deployed (a JVM kept waiting costs memory for nothing otherwise). A spare runs
   * nothing until an account adopts it: it has no model and gets no call.
   */
  private void refillSpare() {
    AccountEnvironment made;
    synchronized (this) {
      if (closed || spare != null || settings.spares() == 0 || (language == Language.JAVA && models.isEmpty())) {
        return;
      }
      made = newEnvironment(null);
      spare = made;
    }
    start(made);
  }

  // The one idle (nothing running or waiting) for longest, if any.
  private Optional<AccountEnvironment> idlest() {
    return byAccount.values().stream().filter(e -> e.busy() == 0)
        .min(Comparator.comparingLong(AccountEnvironment::lastUsedMs));
  }

  // Called with the pool's lock held.
  private void forget(AccountEnvironment env) {
    byAccount.remove(env.account(), env);
    slots.clear(env.slot());
    restartsOfStopped += env.restarts();
    callsOfStopped += env.process().calls();
    if (!env.problem().isEmpty()) {
      lastProblem = env.problem();
    }
  }

  private void stopIdle() {
    long cutoff = System.currentTimeMillis() - settings.idleMs();
    List<AccountEnvironment> idle = new ArrayList<>();
    synchronized (this) {
      for (AccountEnvironment e : byAccount.values()) {
        if (e.busy() == 0 && e.lastUsedMs() < cutoff) {
          idle.add(e);
        }
      }
      idle.forEach(this::forget);
    }
    for (AccountEnvironment e : idle) {
      LOG.info("stopping the " + language + " execution environment of " + e.account() + ": no call for "
          + settings.idleMs() / 1000 + " s");
      e.close();
    }
  }

  @Override
  public void deploy(List<ModelBundle> bundles) {
    Map<String, AccountEnvironment> envs;
    synchronized (this) {
      for (ModelBundle b : bundles) {
        if (b.language() == language) {
          ModelBundle known = models.get(b.namespace());
          if (known == null || known.version() <= b.version()) {
            models.put(b.namespace(), b);
          }
        }
      }
      envs = new HashMap<>(byAccount);
    }
    envs.values().forEach(env -> env.deploy(usableBy(env.session())));
    services.timer().execute(this::refillSpare);
  }

  @Override
  public void withdraw(Collection<String> namespaces) {
    List<AccountEnvironment> envs;
    Set<AccountEnvironment> hadThem = new HashSet<>();
    synchronized (this) {
      envs = new ArrayList<>(byAccount.values());
      for (AccountEnvironment env : envs) {
        if (usableBy(env.session()).stream().anyMatch(m -> namespaces.contains(m.namespace()))) {
          hadThem.add(env);
        }
      }
      namespaces.forEach(models::remove);
    }
    for (AccountEnvironment env : envs) {
      env.deploy(usableBy(env.session()));
      if (hadThem.contains(env)) {
        env.withdraw(namespaces);
      }
    }
  }

  private synchronized List<ModelBundle> usableBy(Session session) {
    return models.values().stream().filter(m -> usable.test(session, m)).toList();
  }

  @Override
  public CompletableFuture<Void> evict(Collection<UUID> ids) {
    return evictExcept(null, ids);
  }

  /**
   * Drops {@code ids} from every process that loaded them but {@code writer} (whose memory holds
   * the change just stored); completes once a call sent to any of them afterwards sees it.
   */
  @Override
  public CompletableFuture<Void> changed(ExecutionEnvironment writer, Collection<UUID> ids) {
    return evictExcept(writer, ids);
  }

  @Override
  public String storedField(ExecutionRequest request) {
    AccountEnvironment env = byAccount.get(request.session().username());
    return env == null ? null : env.storedField(request);
  }

  @Override
  public int unloadIdle(String account) {
    AccountEnvironment env = byAccount.get(account);
    return env == null ? 0 : env.unloadIdle(account);
  }

  private CompletableFuture<Void> evictExcept(ExecutionEnvironment writer, Collection<UUID> ids) {
    if (ids.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.allOf(byAccount.values().stream().filter(e -> e != writer).map(e -> e.evict(ids))
        .toArray(CompletableFuture[]::new));
  }

  @Override
  public EnvironmentStatus status() {
    List<EnvironmentStatus.Process> processes = new ArrayList<>();
    int restarts;
    long calls;
    String problem = lastProblem;
    synchronized (this) {
      restarts = restartsOfStopped;
      calls = callsOfStopped;
      List<AccountEnvironment> all = new ArrayList<>(byAccount.values());
      if (spare != null) {
        all.add(spare);
      }
      for (AccountEnvironment e : all) {
        EnvironmentStatus.Process p = e.process();
        processes.add(p);
        restarts += p.restarts();
        calls += p.calls();
        if (!e.problem().isEmpty()) {
          problem = e.problem();
        }
      }
    }
    processes.sort(Comparator.comparing(EnvironmentStatus.Process::account));
    boolean working = processes.stream().anyMatch(EnvironmentStatus.Process::alive) || problem.isEmpty();
    return new EnvironmentStatus(language, !closed && working, 0, restarts, calls, settings.confinement(), processes,
        problem);
  }

  @Override
  public void close() {
    List<AccountEnvironment> envs;
    synchronized (this) {
      closed = true;
      envs = new ArrayList<>(byAccount.values());
      byAccount.clear();
      if (spare != null) {
        envs.add(spare);
        spare = null;
      }
    }
    sweeper.cancel(false);
    envs.parallelStream().forEach(AccountEnvironment::close);
    try {
      removeOwn();
      Files.deleteIfExists(tmpRoot); // the last pool of the backend to stop removes the root
    } catch (DirectoryNotEmptyException anotherPoolsDirectoriesRemain) {
      // removed by the pool that stops last
    } catch (IOException e) {
      LOG.warning("could not remove the directories of the " + language + " environments in " + tmpRoot + ": "
          + e.getMessage());
    }
  }

  // The root shared by the backend's pools (0700), without what this language's processes of an
  // earlier run left in it; another language's pool, started at the same time, is left alone.
  private void prepareRoot() throws IOException {
    Files.createDirectories(tmpRoot.getParent());
    try {
      Files.createDirectory(tmpRoot, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (FileAlreadyExistsException exists) {
      if (!Files.isDirectory(tmpRoot, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        throw exists;
      }
    }
    removeOwn();
  }

  private void removeOwn() throws IOException {
    String prefix = language.name().toLowerCase() + "-";
    try (Stream<Path> entries = Files.list(tmpRoot)) {
      for (Path p : entries.filter(e -> e.getFileName().toString().startsWith(prefix)).toList()) {
        removeTree(p);
      }
    } catch (NoSuchFileException gone) {
      // nothing to remove
    }
  }

  // A fresh, empty directory of this user only (whatever an earlier run left there is removed).
  private static void recreate(Path dir) throws IOException {
    removeTree(dir);
    Files.createDirectories(dir.getParent());
    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  // Removes without following links: a link a process left is removed, not what it points to. A
  // process of an earlier run still dying may add a file meanwhile: the walk is tried again.
  private static void removeTree(Path dir) throws IOException {
    for (int attempt = 1; ; attempt++) {
      if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        return;
      }
      try (Stream<Path> walk = Files.walk(dir)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
        return;
      } catch (DirectoryNotEmptyException | NoSuchFileException | java.io.UncheckedIOException raced) {
        if (attempt == 5) {
          throw raced instanceof java.io.UncheckedIOException u ? u.getCause() : (IOException) raced;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while removing " + dir, e);
        }
      }
    }
  }
}
