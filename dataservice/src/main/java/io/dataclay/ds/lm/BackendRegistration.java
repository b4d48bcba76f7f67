package io.dataclay.ds.lm;

import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.models.ModelCatalog;
import io.dataclay.ds.replication.Mastership;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.ds.status.BackendIdentity;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.HeartbeatResponse;
import io.dataclay.proto.Language;
import io.dataclay.proto.ModelList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * This backend's membership in the cluster: registers it with the Logic Module (retrying while
 * the Logic Module is not up), fetches the models to install, and sends heartbeats, logging in
 * and registering again when the Logic Module restarted and forgot the session or the backend.
 * Each heartbeat also brings the sessions closed since the last one, which stop being trusted here,
 * and failover's part: the terms, this backend's master lease (renewed from the moment the
 * heartbeat was sent) and its demotions, applied before the lease is renewed and acknowledged with
 * the next heartbeat. It also names the last model change, so that a backend that missed one (a
 * withdrawal, a removal) fetches the models.
 */
public final class BackendRegistration implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(BackendRegistration.class.getName());
  private static final long RETRY_MS = 200;

  private final BackendSession admin;
  private final Supplier<BackendIdentity> identity;
  private final SessionCache sessions;
  private long sessionsEpoch;
  private long sessionsSeen;
  private final ScheduledExecutorService timer;
  private final long heartbeatMs;
  private ScheduledFuture<?> heartbeat;
  private boolean lmDown;
  private final Mastership mastership;
  private final Function<Map<UUID, String>, List<String>> demote;
  private List<String> demoted = List.of(); // applied, to acknowledge with the next heartbeat
  private final LongConsumer modelsRevision;

  /**
   * Registration of the backend {@code identity} describes, heartbeating every {@code heartbeatMs};
   * the sessions each heartbeat says were closed are dropped from {@code sessions}, and the last
   * model change it names goes to {@code modelsRevision} (which fetches the models when it has not
   * applied that change).
   */
  public BackendRegistration(BackendSession admin, Supplier<BackendIdentity> identity,
      ScheduledExecutorService timer, long heartbeatMs, SessionCache sessions, Mastership mastership,
      Function<Map<UUID, String>, List<String>> demote, LongConsumer modelsRevision) {
    this.modelsRevision = modelsRevision;
    this.mastership = mastership;
    this.demote = demote;
    this.admin = admin;
    this.sessions = sessions;
    this.identity = identity;
    this.timer = timer;
    this.heartbeatMs = heartbeatMs;
  }

  /**
   * Logs in (unless a session is open already), retrying while the Logic Module does not answer.
   *
   * @throws BackendUnavailableException when it did not answer within {@code timeoutMs}
   * @throws io.dataclay.exceptions.DataClayException when it refused (e.g. a wrong password)
   */
  public void logIn(long timeoutMs) throws InterruptedException {
    whileUnavailable(timeoutMs, admin::client);
  }

  /**
   * Registers the backend (logging in first when needed), retrying while the Logic Module does
   * not answer.
   *
   * @throws BackendUnavailableException when it did not answer within {@code timeoutMs}
   * @throws io.dataclay.exceptions.DataClayException when it refused (e.g. a wrong password)
   */
  public void register(long timeoutMs) throws InterruptedException {
    whileUnavailable(timeoutMs, () -> {
      try {
        admin.client().registerBackend(info());
      } catch (NotAuthenticatedException expired) {
        admin.login(); // the Logic Module restarted since the session was opened
        admin.client().registerBackend(info());
      }
    });
  }

  private static void whileUnavailable(long timeoutMs, Runnable call) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      try {
        call.run();
        return;
      } catch (BackendUnavailableException e) {
        if (System.currentTimeMillis() > deadline) {
          throw new BackendUnavailableException("the Logic Module did not answer within " + timeoutMs + " ms: "
              + e.getMessage());
        }
        Thread.sleep(RETRY_MS);
      }
    }
  }

  /** Every registered model (a withdrawn one without files) and the last model change the list includes. */
  public ModelCatalog models() {
    ModelList list = admin.client().listModelsWithRevision(Language.LANGUAGE_UNSPECIFIED);
    List<ModelBundle> out = new ArrayList<>(list.getModelsCount());
    for (int i = 0; i < list.getModelsCount(); i++) {
      out.add(Messages.bundle(list.getModels(i), "ListModels.models[" + i + "]"));
    }
    return new ModelCatalog(out, list.getRevision());
  }

  /** Starts the heartbeat. */
  public synchronized void startHeartbeat() {
    if (heartbeat == null) {
      heartbeat = timer.scheduleWithFixedDelay(() -> beat(), heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
    }
  }

  /** Stops the heartbeat. */
  @Override
  public synchronized void close() {
    if (heartbeat != null) {
      heartbeat.cancel(false);
    }
  }

  /**
   * Sends heartbeats until one is answered (at start: stale copies go, and the master
   * lease begins, before anything is served), for up to {@code timeoutMs}.
   *
   * @throws BackendUnavailableException when none was answered in time
   */
  public void firstBeat(long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!beat()) {
      if (System.currentTimeMillis() > deadline) {
        throw new BackendUnavailableException("the Logic Module did not answer a heartbeat within " + timeoutMs + " ms");
      }
      Thread.sleep(RETRY_MS);
    }
  }

  /** Sends one heartbeat now; whether it was answered. Never throws. */
  public synchronized boolean beat() {
    String id = identity.get().id().toString();
    try {
      try {
        long sentAt = System.nanoTime();
        HeartbeatResponse r = admin.client().heartbeat(id, sessionsEpoch, sessionsSeen, demoted);
        demoted = List.of();
        if (r.getForgetAll()) {
          sessions.forgetAll();
        } else {
          sessions.revoke(r.getClosedTokenSha256List());
        }
        sessionsEpoch = r.getSessionsEpoch();
        sessionsSeen = r.getSessionsSeen();
        boolean renew = r.getDemotionsCount() == 0 && !r.getMoreDemotions();
        if (!renew) {
          Map<UUID, String> stale = new HashMap<>();
          r.getDemotionsList().forEach(d -> stale.put(UUID.fromString(d.getObjectId()), d.getMasterBackendId()));
          demoted = demote.apply(stale);
          LOG.warning("dropped " + demoted.size() + " stale copies (masters whose replicas were promoted, or replicas"
              + " that missed a change, while this backend was unreachable): they come back as fresh replicas");
        }
        mastership.heard(sentAt, r.getMasterLeaseMs(), r.getTermsMap(), renew);
        modelsRevision.accept(r.getModelsRevision());
      } catch (NotAuthenticatedException forgotten) {
        admin.login();
        admin.client().registerBackend(info());
      } catch (BackendDoesNotExistException forgotten) {
        admin.client().registerBackend(info());
      }
      if (lmDown) {
        LOG.info("the Logic Module answers heartbeats again");
        lmDown = false;
      }
      return true;
    } catch (RuntimeException e) {
      if (!lmDown) {
        LOG.warning("heartbeat to the Logic Module failed (will keep trying): " + e.getMessage());
        lmDown = true;
      }
      return false;
    }
  }

  private BackendInfo info() {
    BackendIdentity b = identity.get();
    BackendInfo.Builder info = BackendInfo.newBuilder()
        .setId(b.id().toString()).setName(b.name()).setHost(b.host()).setPort(b.port())
        .setStoreEngine(b.storeEngine()).setAlive(true);
    b.languages().forEach(l -> info.addLanguages(Messages.language(l)));
    return info.build();
  }
}
