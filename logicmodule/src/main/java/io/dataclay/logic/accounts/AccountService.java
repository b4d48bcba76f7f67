package io.dataclay.logic.accounts;

import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.exceptions.AccountDoesNotExistException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.SessionRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/** Accounts, password log-in, sessions and data contracts (docs/internals.md "Sessions"). */
public final class AccountService {
  /** The Logic Module's own account: no password log-in; its token lives only in memory. */
  public static final String SYSTEM_ACCOUNT = "_dataclay_system";
  /** The account backend sessions belong to: no password log-in; backends prove the cluster secret. */
  public static final String BACKEND_ACCOUNT = "_dataclay_backends";
  /** The backend ID of the Logic Module's own session. */
  public static final String LOGIC_MODULE_ID = "logic-module";

  private static final Logger LOG = Logger.getLogger(AccountService.class.getName());
  /** The system session is replaced at every start, so its own expiry only has to be far away. */
  private static final Duration SYSTEM_SESSION_TTL = Duration.ofDays(365L * 100);

  /** What {@link #bootstrapAdministrator} found. */
  public enum Bootstrap { CREATED, ALREADY_PRESENT, PRESENT_WITH_OTHER_PASSWORD }

  private final MetadataStore store;
  private final Duration sessionTtl;
  private final Clock clock;
  private final BackendProofs proofs;
  private final SessionQuota sessionQuota;
  private final SessionTokenCache cache = new SessionTokenCache();
  private final Set<String> knownDatasets = ConcurrentHashMap.newKeySet();

  /** Accounts and sessions over {@code store}; backend sessions are proved through {@code proofs}. */
  public AccountService(MetadataStore store, Duration sessionTtl, Clock clock, BackendProofs proofs,
      SessionLimits sessionLimits) {
    this.store = store;
    this.sessionTtl = sessionTtl;
    this.clock = clock;
    this.proofs = proofs;
    this.sessionQuota = new SessionQuota(sessionLimits, clock::millis);
  }

  /**
   * Creates the configured administrator when no account of that name exists; an existing
   * account is never changed (a different password only earns a warning in the log).
   */
  public Bootstrap bootstrapAdministrator(String username, String password) {
    Checks.name("DATACLAY_USER", username);
    Checks.newPassword("DATACLAY_PASSWORD", password);
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
   * Ensures the system accounts exist, closes the Logic Module sessions of earlier runs and opens
   * a new one; returns its token, which is kept only in this process's memory.
   */
  public String openSystemSession() {
    store.accounts().create(Passwords.lockedAccount(SYSTEM_ACCOUNT, false));
    store.accounts().create(Passwords.lockedAccount(BACKEND_ACCOUNT, false));
    store.sessions().closeAllOf(SYSTEM_ACCOUNT);
    store.sessions().purgeEnded(clock.millis());
    String token = SessionTokens.newToken();
    store.sessions().insert(new SessionRecord(SessionTokens.sha256(token), SYSTEM_ACCOUNT, SYSTEM_ACCOUNT,
        clock.millis() + SYSTEM_SESSION_TTL.toMillis(), false, false, LOGIC_MODULE_ID));
    return token;
  }

  /**
   * Logs in: a new session on {@code dataset} (empty: the user's own), which must be owned or granted.
   *
   * @throws NotAuthenticatedException for an unknown user or a wrong password (same message for both)
   * @throws io.dataclay.exceptions.QuotaExceededException when the account has too many open sessions or opens
   *     them too fast (see {@link SessionQuota})
   */
  public CallerSession newSession(String username, String password, String dataset) {
    Checks.name("username", username);
    Checks.password("password", password);
    Optional<AccountRecord> account = store.accounts().find(username);
    // an unknown user costs the same hashing time as a wrong password: no probing for names
    boolean matches = Passwords.matches(account.orElseGet(Passwords::unknownAccount), password);
    if (account.isEmpty() || !matches) {
      throw new NotAuthenticatedException("wrong username or password");
    }
    String chosen = dataset == null || dataset.isEmpty() ? username : Checks.name("dataset", dataset);
    SessionTokenCache.Entry access = new SessionTokenCache.Entry(null, store.accounts().ownedDatasets(username),
        store.accounts().contractsTo(username));
    long now = clock.millis();
    CallerSession granted = session("", new SessionRecord("", username, chosen, now + sessionTtl.toMillis(), false,
        account.get().admin(), null), access, now);
    if (!granted.mayUse(chosen)) {
      requireDatasetExists(chosen);
      throw new PermissionDeniedException("dataset: '" + username + "' neither owns nor holds a contract in force"
          + " on dataset '" + chosen + "'");
    }
    String token = SessionTokens.newToken();
    // charged only after the password matched: a stranger cannot use up someone else's quota
    synchronized (sessionQuota) {
      sessionQuota.admit(username, store.sessions().countOpenOf(username, now));
      store.sessions().insert(new SessionRecord(SessionTokens.sha256(token), username, chosen,
          granted.expiresAtMs(), false, account.get().admin(), null));
    }
    return new CallerSession(token, username, chosen, granted.datasets(), granted.readOnlyDatasets(),
        granted.expiresAtMs(), granted.admin(), null, granted.accessChangesAtMs());
  }

  /**
   * A backend's session: the backend proved it knows the cluster secret (see {@link BackendProofs}).
   *
   * @throws NotAuthenticatedException when the proof is wrong, stale or replayed
   */
  public CallerSession newBackendSession(String backendId, long issuedAtMs, String nonce, byte[] proof) {
    Checks.uuid("backend_id", backendId);
    proofs.verify(backendId, issuedAtMs, nonce, proof);
    String token = SessionTokens.newToken();
    long expires = clock.millis() + sessionTtl.toMillis();
    store.sessions().insert(new SessionRecord(SessionTokens.sha256(token), BACKEND_ACCOUNT, BACKEND_ACCOUNT,
        expires, false, false, backendId));
    return new CallerSession(token, BACKEND_ACCOUNT, BACKEND_ACCOUNT, List.of(BACKEND_ACCOUNT), Set.of(), expires, false,
        backendId, 0);
  }

  /**
   * The open session a token belongs to (without the token), with the access in force now.
   *
   * @throws NotAuthenticatedException when the token is missing, unknown, closed or expired
   */
  public CallerSession authenticate(String token) {
    if (token == null || token.isEmpty()) {
      throw new NotAuthenticatedException("no session: log in with NewSession and send its token as metadata"
          + " 'dataclay-session'");
    }
    String hash = SessionTokens.sha256(token);
    SessionTokenCache.Entry entry = cache.get(hash);
    if (entry == null) {
      long generation = cache.generation();
      SessionRecord s = store.sessions().find(hash)
          .orElseThrow(() -> new NotAuthenticatedException("unknown session token"));
      entry = s.backend() ? new SessionTokenCache.Entry(s, List.of(s.dataset()), List.of())
          : new SessionTokenCache.Entry(s, store.accounts().ownedDatasets(s.username()),
              store.accounts().contractsTo(s.username()));
      cache.put(hash, entry, generation);
    }
    SessionRecord s = entry.session();
    if (s.closed()) {
      throw new NotAuthenticatedException("the session was closed");
    }
    long now = clock.millis();
    if (s.expiresAtMs() <= now) {
      throw new NotAuthenticatedException("the session expired at " + Instant.ofEpochMilli(s.expiresAtMs()));
    }
    CallerSession session = session("", s, entry, now);
    if (!s.backend() && !session.mayUse(s.dataset())) {
      throw new NotAuthenticatedException("the session's dataset '" + s.dataset() + "' is no longer granted to '"
          + s.username() + "' (its data contract was revoked or expired): log in again");
    }
    return session;
  }

  /** The access of session row {@code s} at {@code now}: owned datasets, and contracts in force. */
  private static CallerSession session(String token, SessionRecord s, SessionTokenCache.Entry access, long now) {
    Set<String> readable = new TreeSet<>(access.owned());
    Set<String> readOnly = new HashSet<>();
    long changesAt = 0;
    for (ContractRecord c : access.contracts()) {
      long next = c.nextChangeAfter(now);
      if (next != 0 && (changesAt == 0 || next < changesAt)) {
        changesAt = next;
      }
      if (c.inForce(now) && !access.owned().contains(c.dataset())) {
        readable.add(c.dataset());
        if (c.readOnly()) {
          readOnly.add(c.dataset());
        }
      }
    }
    return new CallerSession(token, s.username(), s.dataset(), new ArrayList<>(readable), readOnly, s.expiresAtMs(),
        s.admin(), s.backendId(), changesAt);
  }

  /** Closes the caller's session: its token is refused from now on. Returns the token's hash. */
  public String closeSession(String token) {
    authenticate(token);
    String hash = SessionTokens.sha256(token);
    store.sessions().close(hash);
    cache.invalidate(hash);
    return hash;
  }

  /** What a backend learns about a client's token (backends only). */
  public CallerSession validateSession(CallerSession caller, String clientToken) {
    caller.requireBackend("ValidateSession");
    return authenticate(Checks.token("token", clientToken));
  }

  /**
   * Creates an account and its own dataset (administrators only). A name "{@code <account>.<name>}"
   * of an existing account is refused: such names are that account's datasets.
   */
  public void newAccount(CallerSession caller, String username, String password, boolean admin) {
    caller.requireAdmin("NewAccount");
    Checks.name("username", username);
    Checks.newPassword("password", password);
    for (String prefix : dottedPrefixes(username)) {
      if (store.accounts().find(prefix).isPresent()) {
        throw Checks.invalid("username", "'" + username + "' is in the dataset namespace of account '" + prefix
            + "' (its datasets are named '" + prefix + ".<name>'): choose a name that does not start with '"
            + prefix + ".'");
      }
    }
    if (!store.accounts().create(Passwords.newAccount(username, password, admin))) {
      throw new AccountAlreadyExistsException("account '" + username + "' already exists");
    }
  }

  /**
   * Grants {@code contract.beneficiary()} access to a dataset of the caller on the contract's
   * terms (replacing earlier ones). A dataset that does not exist yet is created for the caller
   * only when it is named "{@code <caller>.<name>}", so that nobody takes a name an account has or
   * may get (see {@link #newAccount}); a dataset of another owner is refused.
   */
  public void newDataContract(CallerSession caller, ContractRecord contract) {
    Checks.name("dataset", contract.dataset());
    Checks.name("beneficiary", contract.beneficiary());
    if (caller.backend()) {
      throw new PermissionDeniedException("a backend session owns no dataset to grant");
    }
    if (contract.beginsAtMs() < 0 || contract.expiresAtMs() < 0) {
      throw Checks.invalid("begins_at_ms/expires_at_ms", "must be epoch milliseconds (0: now / never)");
    }
    long begins = contract.beginsAtMs() == 0 ? clock.millis() : contract.beginsAtMs();
    if (contract.expiresAtMs() != 0 && contract.expiresAtMs() <= begins) {
      throw Checks.invalid("expires_at_ms", "must be after the contract begins (" + Instant.ofEpochMilli(begins)
          + ")");
    }
    Optional<String> owner = store.accounts().datasetOwner(contract.dataset());
    if (owner.isPresent() && !owner.get().equals(caller.username())) {
      throw new PermissionDeniedException("dataset: '" + contract.dataset() + "' belongs to another account;"
          + " only its owner grants access to it");
    }
    if (owner.isEmpty() && caller.admin() && !contract.dataset().startsWith(caller.username() + ".")) {
      requireFreeName(contract.dataset());
    } else if (owner.isEmpty()) {
      requireOwnNamespace(caller.username(), contract.dataset());
    }
    if (store.accounts().find(contract.beneficiary()).isEmpty()) {
      throw new AccountDoesNotExistException("beneficiary: account '" + contract.beneficiary() + "' does not exist");
    }
    store.accounts().grant(new ContractRecord(contract.dataset(), caller.username(), contract.beneficiary(),
        contract.readOnly(), begins, contract.expiresAtMs()));
    // sessions list their datasets: the beneficiary's (and a new dataset's owner's) lists changed
    cache.invalidateAll();
  }

  // A new dataset of an account is "<account>.<name>", and no longer prefix of it names another
  // account (whose own namespace it would be: account "a.b" owns the names "a.b.*", not "a").
  private void requireOwnNamespace(String account, String dataset) {
    boolean inNamespace = dataset.startsWith(account + ".");
    for (String prefix : dottedPrefixes(dataset)) {
      if (prefix.length() > account.length() && store.accounts().find(prefix).isPresent()) {
        inNamespace = false;
      }
    }
    if (!inNamespace) {
      throw new DatasetDoesNotExistException("dataset: '" + dataset + "' does not exist; a new dataset is created"
          + " by its owner's first NewDataContract and must be named '" + account + ".<name>' (for example '"
          + account + "." + dataset + "'), so that it never takes the name of an account");
    }
  }

  // An administrator may name a new dataset freely (dataClay 4 deployments use names such as "testdata"),
  // but never with an account's name nor inside an account's namespace ("<account>.<name>").
  private void requireFreeName(String dataset) {
    if (store.accounts().find(dataset).isPresent()) {
      throw Checks.invalid("dataset", "'" + dataset + "' is the name of an account (its own dataset's name)");
    }
    for (String prefix : dottedPrefixes(dataset)) {
      if (store.accounts().find(prefix).isPresent()) {
        throw Checks.invalid("dataset", "'" + dataset + "' is in the namespace of account '" + prefix + "', whose"
            + " datasets only it makes");
      }
    }
  }

  /** "a", "a.b" for "a.b.c": every name before one of its dots. */
  private static List<String> dottedPrefixes(String name) {
    List<String> out = new ArrayList<>();
    for (int dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
      out.add(name.substring(0, dot));
    }
    return out;
  }

  /** Takes back the contract of {@code beneficiary} on a dataset the caller owns. */
  public void revokeDataContract(CallerSession caller, String dataset, String beneficiary) {
    Checks.name("dataset", dataset);
    Checks.name("beneficiary", beneficiary);
    if (!store.accounts().revoke(dataset, caller.username(), beneficiary)) {
      throw new AccountDoesNotExistException("beneficiary: '" + beneficiary + "' holds no contract on dataset '"
          + dataset + "'");
    }
    cache.invalidateAll();
  }

  /**
   * The contracts on the caller's datasets, then those granted to the caller on others' datasets:
   * each contract once, also one the caller holds on its own dataset (NewDataset makes one).
   */
  public List<ContractRecord> listDataContracts(CallerSession caller) {
    List<ContractRecord> out = new ArrayList<>(store.accounts().contractsOn(caller.username()));
    for (ContractRecord c : store.accounts().contractsTo(caller.username())) {
      if (!c.owner().equals(caller.username())) {
        out.add(c);
      }
    }
    return out;
  }

  /** Lets an account register models, or stops it (administrators only). */
  public void setModelRegistration(CallerSession caller, String username, boolean allowed) {
    caller.requireAdmin(allowed ? "GrantModelRegistration" : "RevokeModelRegistration");
    Checks.name("username", username);
    if (!store.accounts().setModelRegistration(username, allowed)) {
      throw new AccountDoesNotExistException("username: account '" + username + "' does not exist");
    }
  }

  /**
   * Returns normally when the caller may register models: an administrator, or an account an
   * administrator allowed to.
   */
  public void requireModelRegistration(CallerSession caller) {
    if (caller.admin()) {
      return;
    }
    boolean allowed = !caller.backend()
        && store.accounts().find(caller.username()).map(AccountRecord::mayRegisterModels).orElse(false);
    if (!allowed) {
      throw new PermissionDeniedException("registering a model runs its code in every backend: it needs an"
          + " administrator, or an account an administrator allowed with GrantModelRegistration; '"
          + caller.username() + "' is neither");
    }
  }

  /** Fails unless the dataset exists (datasets are never deleted, so a found one is remembered). */
  public void requireDatasetExists(String dataset) {
    if (knownDatasets.contains(dataset)) {
      return;
    }
    if (store.accounts().datasetOwner(dataset).isEmpty()) {
      throw new DatasetDoesNotExistException("dataset '" + dataset + "' does not exist: its owner makes it with"
          + " dataclaycmd NewDataset <owner> <password> <owner>." + dataset + " (an administrator may also name it '"
          + dataset + "' and grant it with NewDataContract); a session's default dataset is the account's own name");
    }
    knownDatasets.add(dataset);
  }

  /** Sessions neither closed nor expired. */
  public long openSessions() {
    return store.sessions().countOpen(clock.millis());
  }

  /** Users' sessions (not backends' nor the Logic Module's) neither closed nor expired, per account that has any. */
  public Map<String, Long> openSessionsByAccount() {
    return store.sessions().countOpenByAccount(clock.millis());
  }
}
