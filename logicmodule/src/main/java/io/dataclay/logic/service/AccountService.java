package io.dataclay.logic.service;

import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.exceptions.AccountDoesNotExistException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.SessionRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/** Accounts, password log-in, sessions and data contracts (docs/internals.md "Sessions"). */
public final class AccountService {
  /** The Logic Module's own administrator: no password log-in; its token lives only in memory. */
  public static final String SYSTEM_ACCOUNT = "_dataclay_system";

  private static final Logger LOG = Logger.getLogger(AccountService.class.getName());
  /** The system session is replaced at every start, so its own expiry only has to be far away. */
  private static final Duration SYSTEM_SESSION_TTL = Duration.ofDays(365L * 100);

  /** What {@link #bootstrapAdministrator} found. */
  public enum Bootstrap { CREATED, ALREADY_PRESENT, PRESENT_WITH_OTHER_PASSWORD }

  private final MetadataStore store;
  private final Duration sessionTtl;
  private final Clock clock;
  private final SessionCache cache = new SessionCache();
  private final Set<String> knownDatasets = ConcurrentHashMap.newKeySet();

  AccountService(MetadataStore store, Duration sessionTtl, Clock clock) {
    this.store = store;
    this.sessionTtl = sessionTtl;
    this.clock = clock;
  }

  /**
   * Creates the configured administrator when no account of that name exists; an existing
   * account is never changed (a different password only earns a warning in the log).
   */
  public Bootstrap bootstrapAdministrator(String username, String password) {
    Checks.name("DATACLAY_USER", username);
    Checks.password("DATACLAY_PASSWORD", password);
    if (store.accounts().create(Passwords.newAccount(username, password, true))) {
      return Bootstrap.CREATED;
    }
    AccountRecord existing = store.accounts().find(username).orElseThrow();
    if (!Passwords.matches(existing, password)) {
      LOG.warning("account '" + username + "' already exists with a different password than DATACLAY_PASSWORD;"
          + " it was left unchanged: log in with its existing password");
      return Bootstrap.PRESENT_WITH_OTHER_PASSWORD;
    }
    return Bootstrap.ALREADY_PRESENT;
  }

  /**
   * Ensures the system account exists, closes the sessions of earlier runs and opens a new
   * one; returns its token, which is kept only in this process's memory.
   */
  String openSystemSession() {
    store.accounts().create(Passwords.lockedAccount(SYSTEM_ACCOUNT, true));
    store.sessions().closeAllOf(SYSTEM_ACCOUNT);
    store.sessions().purgeEnded(clock.millis());
    String token = SessionTokens.newToken();
    store.sessions().insert(new SessionRecord(SessionTokens.sha256(token), SYSTEM_ACCOUNT, SYSTEM_ACCOUNT,
        clock.millis() + SYSTEM_SESSION_TTL.toMillis(), false, true));
    return token;
  }

  /**
   * Logs in: a new session on {@code dataset} (empty: the user's own), which must be owned or granted.
   *
   * @throws NotAuthenticatedException for an unknown user or a wrong password (same message for both)
   */
  public Session newSession(String username, String password, String dataset) {
    Checks.name("username", username);
    Checks.password("password", password);
    Optional<AccountRecord> account = store.accounts().find(username);
    // an unknown user costs the same hashing time as a wrong password: no probing for names
    boolean matches = Passwords.matches(account.orElseGet(Passwords::unknownAccount), password);
    if (account.isEmpty() || !matches) {
      throw new NotAuthenticatedException("wrong username or password");
    }
    String chosen = dataset == null || dataset.isEmpty() ? username : Checks.name("dataset", dataset);
    List<String> datasets = store.accounts().datasetsOf(username);
    if (!datasets.contains(chosen)) {
      requireDatasetExists(chosen);
      throw new PermissionDeniedException("dataset: '" + username + "' neither owns nor was granted dataset '"
          + chosen + "'");
    }
    String token = SessionTokens.newToken();
    long expires = clock.millis() + sessionTtl.toMillis();
    store.sessions().insert(new SessionRecord(SessionTokens.sha256(token), username, chosen, expires, false,
        account.get().admin()));
    return new Session(token, username, chosen, datasets, expires, account.get().admin());
  }

  /**
   * The open session a token belongs to (without the token).
   *
   * @throws NotAuthenticatedException when the token is missing, unknown, closed or expired
   */
  public Session authenticate(String token) {
    if (token == null || token.isEmpty()) {
      throw new NotAuthenticatedException("no session: log in with NewSession and send its token as metadata"
          + " 'dataclay-session'");
    }
    String hash = SessionTokens.sha256(token);
    SessionCache.Entry entry = cache.get(hash);
    if (entry == null) {
      long generation = cache.generation();
      SessionRecord s = store.sessions().find(hash)
          .orElseThrow(() -> new NotAuthenticatedException("unknown session token"));
      entry = new SessionCache.Entry(s, store.accounts().datasetsOf(s.username()));
      cache.put(hash, entry, generation);
    }
    SessionRecord s = entry.session();
    if (s.closed()) {
      throw new NotAuthenticatedException("the session was closed");
    }
    if (s.expiresAtMs() <= clock.millis()) {
      throw new NotAuthenticatedException("the session expired at " + Instant.ofEpochMilli(s.expiresAtMs()));
    }
    return new Session("", s.username(), s.dataset(), entry.datasets(), s.expiresAtMs(), s.admin());
  }

  /** Closes the caller's session: its token is refused from now on. */
  public void closeSession(String token) {
    authenticate(token);
    String hash = SessionTokens.sha256(token);
    store.sessions().close(hash);
    cache.invalidate(hash);
  }

  /** What an administrator (a backend) learns about a client's token. */
  public Session validateSession(Session caller, String clientToken) {
    caller.requireAdmin("ValidateSession");
    return authenticate(Checks.token("token", clientToken));
  }

  /** Creates an account and its own dataset (administrators only). */
  public void newAccount(Session caller, String username, String password, boolean admin) {
    caller.requireAdmin("NewAccount");
    Checks.name("username", username);
    Checks.password("password", password);
    if (!store.accounts().create(Passwords.newAccount(username, password, admin))) {
      throw new AccountAlreadyExistsException("account '" + username + "' already exists");
    }
  }

  /** Grants {@code beneficiary} access to {@code dataset}, creating it for the caller when absent. */
  public void newDataContract(Session caller, String dataset, String beneficiary) {
    Checks.name("dataset", dataset);
    Checks.name("beneficiary", beneficiary);
    if (store.accounts().find(beneficiary).isEmpty()) {
      throw new AccountDoesNotExistException("beneficiary: account '" + beneficiary + "' does not exist");
    }
    store.accounts().grant(dataset, caller.username(), beneficiary);
    // sessions list their datasets: the beneficiary's (and a new dataset's owner's) lists changed
    cache.invalidateAll();
  }

  /** Fails unless the dataset exists (datasets are never deleted, so a found one is remembered). */
  void requireDatasetExists(String dataset) {
    if (knownDatasets.contains(dataset)) {
      return;
    }
    if (store.accounts().datasetOwner(dataset).isEmpty()) {
      throw new DatasetDoesNotExistException("dataset '" + dataset + "' does not exist");
    }
    knownDatasets.add(dataset);
  }

  /** Sessions neither closed nor expired. */
  long openSessions() {
    return store.sessions().countOpen(clock.millis());
  }
}
