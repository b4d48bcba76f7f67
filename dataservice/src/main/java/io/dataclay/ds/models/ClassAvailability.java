package io.dataclay.ds.models;

import io.dataclay.common.Language;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether a class can be used on this backend, and by whom. Until the models registered when the
 * backend started are installed, callers wait for them (up to a deadline) rather than being
 * refused; once they are, a class this backend does not know makes it fetch the registered models
 * again (a deployment it missed while unreachable) before the class is refused. A class of a
 * withdrawn model is refused to everyone, one of an unpublished model to everyone but its owner,
 * administrators and backends, each with a message that says why and what to do.
 */
public final class ClassAvailability {
  // a client repeating unknown class names costs the Logic Module at most one ListModels per gap
  private static final long MIN_REFRESH_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
  // the Python library's own dataClay classes (see isLibraryClass)
  private static final Set<String> LIBRARY_CLASSES = Set.of("dataclay.alien.AlienDataClayObject");

  private final ModelRegistry registry;
  private final long waitMs;
  private final CountDownLatch installed = new CountDownLatch(1);
  private final Object refreshing = new Object();
  private final AtomicBoolean catchingUp = new AtomicBoolean();
  private volatile Runnable refresh = () -> {};
  private long lastRefreshStart = System.nanoTime() - MIN_REFRESH_GAP_NANOS; // guarded by refreshing

  /** Availability over {@code registry}; callers wait up to {@code waitMs} for the start-up install. */
  public ClassAvailability(ModelRegistry registry, long waitMs) {
    this.registry = registry;
    this.waitMs = waitMs;
  }

  /** Sets how to fetch and install every registered model (called on a miss, never concurrently). */
  public void refreshWith(Runnable fetchAndInstall) {
    this.refresh = fetchAndInstall;
  }

  /** The models registered when this backend started are installed: calls stop waiting. */
  public void markInstalled() {
    installed.countDown();
  }

  /** Whether the start-up install is done (a call may then run without waiting for it). */
  public boolean ready() {
    return installed.getCount() == 0;
  }

  /**
   * Returns once the start-up install is done.
   *
   * @throws BackendUnavailableException when it is not done within the wait
   */
  public void awaitReady() {
    if (ready()) {
      return;
    }
    try {
      if (installed.await(waitMs, TimeUnit.MILLISECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new BackendUnavailableException("this backend is still installing the registered models (waited "
        + waitMs + " ms); retry the call");
  }

  /**
   * Whether a model this backend knows (installed or withdrawn) defines the class, decided without
   * waiting or fetching; false means {@link #requireUsable} may have to wait or fetch the models first.
   */
  public boolean isDecidedNow(Language language, String className) {
    return isLibraryClass(language, className) || (ready() && registry.modelOf(language, className).isPresent());
  }

  /**
   * The Python client library's own dataClay classes (dataClay 4's AlienDataClayObject), usable by every
   * account without a model: they run no code of anybody's, and hold only what the environments'
   * unpickling accepts anyway.
   */
  public static boolean isLibraryClass(Language language, String className) {
    return language == Language.PYTHON && LIBRARY_CLASSES.contains(className);
  }

  /**
   * Returns normally when {@code session} may use {@code className} (make objects of it persistent,
   * call its methods, read or write its fields); waits and fetches like {@link #isAvailable}.
   *
   * @param where what names the class in the request, for the message (e.g. "objects[2]")
   * @throws io.dataclay.exceptions.ClassNotRegisteredException when no model defines it here, or
   *     its model is withdrawn
   * @throws PermissionDeniedException when its model is not published and the session's account
   *     is neither its owner nor an administrator
   */
  public void requireUsable(Session session, Language language, String className, String where) {
    if (!isDecidedNow(language, className)) {
      isAvailable(language, className);
    }
    requireUsableNow(session, language, className, where);
  }

  /**
   * {@link #requireUsable} without waiting or fetching: a class no model here defines (yet) is
   * refused at once. For result checks that run where nothing may block.
   */
  public void requireUsableNow(Session session, Language language, String className, String where) {
    if (isLibraryClass(language, className)) {
      return;
    }
    ModelBundle model = registry.modelOf(language, className).orElseThrow(
        () -> new ClassNotRegisteredException(notRegistered(language, className)));
    if (model.withdrawn()) {
      throw new ClassNotRegisteredException("class " + className + " (" + where + ") belongs to model '"
          + model.namespace() + "' of account '" + model.owner() + "', whose right to register models was revoked:"
          + " its code is loaded on no backend. An administrator may restore it with dataclaycmd"
          + " GrantModelRegistration <admin> <password> " + model.owner());
    }
    if (!model.usableBy(session)) {
      throw new PermissionDeniedException("class " + className + " (" + where + ") belongs to model '"
          + model.namespace() + "' of account '" + model.owner() + "', which is not published: only '"
          + model.owner() + "' and administrators may use it, not '" + session.username() + "'. Ask '"
          + model.owner() + "' or an administrator to run dataclaycmd PublishModel <user> <password> "
          + model.namespace());
    }
  }

  /**
   * What to tell a caller whose class no model here defines: that a class of a Python program's main
   * script can never be stored, else which command registers the model that defines it.
   */
  static String notRegistered(Language language, String className) {
    if (language == Language.PYTHON && className.startsWith("__main__.")) {
      String name = className.substring("__main__.".length());
      return "class " + name + " is defined in the script being run (module __main__), and classes defined there can "
          + "never be stored: backends cannot import a script. Move " + name + " into a module of its own (e.g. "
          + "model.py beside the script, then `from model import " + name + "`) and register that module's "
          + "directory: dataclaycmd NewModel <user> - <namespace> <directory> python";
    }
    int dot = className.indexOf('.');
    if (language == Language.PYTHON) {
      String top = dot < 0 ? className : className.substring(0, dot);
      return "class " + className + " is not in any registered model: register the model that "
          + "defines it with dataclaycmd NewModel <user> - <namespace> <directory holding " + top + "> python";
    }
    return "class " + className + " is not in any registered model: register the model that "
        + "defines it with dataclaycmd NewModel <user> - <namespace> <classes directory or jar> java";
  }

  /**
   * Fetches and installs the registered models on {@code executor}, unless a fetch is under way
   * (a heartbeat said the Logic Module has model changes this backend did not apply).
   */
  public void catchUp(Executor executor) {
    if (catchingUp.compareAndSet(false, true)) {
      try {
        executor.execute(() -> {
          try {
            refreshAfter(System.nanoTime());
          } finally {
            catchingUp.set(false);
          }
        });
      } catch (RejectedExecutionException e) {
        catchingUp.set(false); // stopping
      }
    }
  }

  /**
   * Whether {@code className} belongs to a model this backend knows (its code may be withdrawn):
   * waits for the start-up install, and fetches the registered models once when the class is not
   * known yet. May block on the Logic Module: never call it on a network thread with a class
   * {@link #isDecidedNow} denies.
   *
   * @throws BackendUnavailableException when the start-up install is not done within the wait
   */
  public boolean isAvailable(Language language, String className) {
    awaitReady();
    if (registry.modelOf(language, className).isPresent()) {
      return true;
    }
    refreshAfter(System.nanoTime());
    return registry.modelOf(language, className).isPresent();
  }

  /** Runs a refresh that starts after {@code missedAt}, unless one already did. */
  private void refreshAfter(long missedAt) {
    synchronized (refreshing) {
      if (lastRefreshStart - missedAt >= 0) {
        return; // a refresh that started after the miss has finished while this thread waited
      }
      long gap = lastRefreshStart + MIN_REFRESH_GAP_NANOS - System.nanoTime();
      if (gap > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(gap);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      lastRefreshStart = System.nanoTime();
      refresh.run();
    }
  }
}
