package io.dataclay.logic.accounts;

import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.exceptions.AccountDoesNotExistException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class AccountAndSessionRulesTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;

  @Test
  void a_wrong_password_and_an_unknown_user_are_not_authenticated_alike() {
    // setup
    lm.user("alice");
    // run
    NotAuthenticatedException wrong = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newSession("alice", "nope", ""));
    NotAuthenticatedException unknown = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newSession("nobody", "nope", ""));
    // verify
    assertEquals(wrong.getMessage(), unknown.getMessage());
  }

  @Test
  void a_token_is_256_random_bits_and_only_its_sha256_is_stored() {
    // run
    CallerSession s = lm.service.newSession("admin", LogicModuleFixture.PASSWORD, "");
    // verify
    assertEquals(32, Base64.getUrlDecoder().decode(s.token()).length);
    assertTrue(lm.store.sessions().find(SessionTokens.sha256(s.token())).isPresent());
    assertTrue(lm.store.sessions().find(s.token()).isEmpty());
    assertEquals(lm.clock.millis() + LogicModuleFixture.SESSION_TTL.toMillis(), s.expiresAtMs());
  }

  @Test
  void passwords_are_stored_as_salted_pbkdf2_with_at_least_100k_iterations() {
    // setup
    lm.service.newAccount(lm.adminToken, "alice", "same-password", false);
    lm.service.newAccount(lm.adminToken, "bob", "same-password", false);
    // run
    AccountRecord a = lm.store.accounts().find("alice").orElseThrow();
    AccountRecord b = lm.store.accounts().find("bob").orElseThrow();
    // verify
    assertTrue(a.passwordIterations() >= 100_000);
    assertNotEquals(a.passwordSalt(), b.passwordSalt());
    assertNotEquals(a.passwordHash(), b.passwordHash());
    assertFalse(a.passwordHash().contains("same-password"));
  }

  @Test
  void an_expired_session_is_refused() {
    // setup
    String token = lm.user("alice");
    // run
    lm.clock.advance(LogicModuleFixture.SESSION_TTL.plus(Duration.ofMillis(1)));
    // verify
    NotAuthenticatedException e = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.getBackends(token));
    assertTrue(e.getMessage().contains("expired"), e.getMessage());
  }

  @Test
  void a_closed_session_is_refused_and_counts_no_longer_as_open() {
    // setup
    String token = lm.user("alice");
    long openBefore = lm.service.stats(lm.adminToken).openSessions();
    // run
    lm.service.closeSession(token);
    // verify
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(token));
    assertEquals(openBefore - 1, lm.service.stats(lm.adminToken).openSessions());
  }

  @Test
  void open_sessions_per_account_count_users_sessions_neither_closed_nor_expired_and_no_backends() {
    // setup: alice has two sessions, bob one he closes; a backend opens one
    lm.user("alice");
    lm.session("alice", "alice");
    String bob = lm.user("bob");
    lm.backendSession(lm.backendId);
    // run
    lm.service.closeSession(bob);
    Map<String, Long> open = lm.service.stats(lm.adminToken).sessionsByAccount();
    lm.clock.advance(LogicModuleFixture.SESSION_TTL.plus(Duration.ofMillis(1)));
    String freshAdmin = lm.session("admin", "admin");
    Map<String, Long> afterExpiry = lm.service.stats(freshAdmin).sessionsByAccount();
    // verify: the administrator's fixture session counts; the backends' and the Logic Module's never do
    assertEquals(Map.of("admin", 1L, "alice", 2L), open);
    assertEquals(Map.of("admin", 1L), afterExpiry);
  }

  @Test
  void a_missing_or_unknown_token_is_not_authenticated() {
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(null));
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(""));
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends("bogus"));
  }

  @Test
  void sessions_survive_a_restart_of_the_logic_module() {
    // setup
    String token = lm.user("alice");
    // run
    lm = sqlite.restart();
    // verify
    assertEquals("alice", lm.service.validateSession(lm.backendToken, token).username());
  }

  @Test
  void a_session_defaults_to_the_users_own_dataset_and_lists_granted_ones() {
    // setup
    String alice = lm.user("alice");
    lm.user("bob");
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.shared", "bob"));
    // run
    CallerSession bob = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "");
    CallerSession bobOnShared = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "alice.shared");
    // verify
    assertEquals("bob", bob.dataset());
    assertEquals(List.of("alice.shared", "bob"), bob.datasets());
    assertEquals("alice.shared", bobOnShared.dataset());
  }

  @Test
  void a_session_on_a_dataset_neither_owned_nor_granted_is_refused() {
    // setup
    lm.user("alice");
    lm.user("bob");
    // run / verify
    String pw = LogicModuleFixture.PASSWORD;
    assertThrows(PermissionDeniedException.class, () -> lm.service.newSession("bob", pw, "alice"));
    assertThrows(DatasetDoesNotExistException.class, () -> lm.service.newSession("bob", pw, "nowhere"));
  }

  @Test
  void only_the_owner_may_grant_a_dataset_and_only_to_an_existing_account() {
    // setup
    String alice = lm.user("alice");
    String bob = lm.user("bob");
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.shared", "bob"));
    // run / verify
    assertThrows(PermissionDeniedException.class,
        () -> lm.service.newDataContract(bob, LogicModuleFixture.contract("alice.shared", "bob")));
    assertThrows(PermissionDeniedException.class,
        () -> lm.service.newDataContract(bob, LogicModuleFixture.contract("alice", "bob")));
    assertThrows(AccountDoesNotExistException.class,
        () -> lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.shared", "carol")));
    assertEquals(List.of("alice", "alice.shared"), lm.service.validateSession(lm.backendToken, alice).datasets());
  }

  @Test
  void a_new_dataset_is_named_in_its_owners_namespace_so_no_account_name_can_be_squatted() {
    // setup
    String alice = lm.user("alice");
    lm.user("bob");
    // run
    DatasetDoesNotExistException squat = assertThrows(DatasetDoesNotExistException.class,
        () -> lm.service.newDataContract(alice, LogicModuleFixture.contract("carol", "bob")));
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.notes", "bob"));
    lm.service.newAccount(lm.adminToken, "carol", "carol-password-1", false);
    InvalidArgumentException inNamespace = assertThrows(InvalidArgumentException.class,
        () -> lm.service.newAccount(lm.adminToken, "alice.notes2", "alice-notes-password", false));
    // verify
    assertTrue(squat.getMessage().contains("'alice.<name>'"), squat.getMessage());
    assertTrue(inNamespace.getMessage().contains("namespace of account 'alice'"), inNamespace.getMessage());
    assertEquals(List.of("carol"), lm.service.newSession("carol", "carol-password-1", "").datasets());
  }

  @Test
  void an_administrator_names_a_new_dataset_freely_but_never_an_accounts_name_or_namespace() {
    // setup
    lm.user("alice");
    // run: dataClay 4 deployments name datasets such as "testdata"
    lm.service.newDataContract(lm.adminToken, LogicModuleFixture.contract("testdata", "alice"));
    lm.service.newDataContract(lm.adminToken, LogicModuleFixture.contract("admin.own", "alice"));
    PermissionDeniedException account = assertThrows(PermissionDeniedException.class,
        () -> lm.service.newDataContract(lm.adminToken, LogicModuleFixture.contract("alice", "alice")));
    InvalidArgumentException namespace = assertThrows(InvalidArgumentException.class,
        () -> lm.service.newDataContract(lm.adminToken, LogicModuleFixture.contract("alice.x", "alice")));
    // verify
    assertTrue(account.getMessage().contains("belongs to another account"), account.getMessage());
    assertTrue(namespace.getMessage().contains("namespace of account 'alice'"), namespace.getMessage());
    assertEquals(List.of("alice", "admin.own", "testdata").stream().sorted().toList(),
        lm.service.newSession("alice", LogicModuleFixture.PASSWORD, "testdata").datasets().stream().sorted().toList());
  }

  @Test
  void administrator_only_calls_are_refused_to_other_users() {
    // setup
    String alice = lm.user("alice");
    // run / verify
    assertThrows(PermissionDeniedException.class,
        () -> lm.service.newAccount(alice, "bob", "long-enough-password", false));
    assertThrows(PermissionDeniedException.class, () -> lm.service.setModelRegistration(alice, "alice", true));
    assertThrows(PermissionDeniedException.class, () -> lm.service.stats(alice));
    assertEquals(0, lm.service.stats(lm.adminToken).objects());
    assertTrue(lm.store.accounts().find("bob").isEmpty());
    assertFalse(lm.store.accounts().find("alice").orElseThrow().mayRegisterModels());
  }

  @Test
  void backend_only_calls_are_refused_to_users_and_administrators_alike() {
    // setup
    String alice = lm.user("alice");
    String backend = lm.backend(7001);
    // run / verify
    for (String user : List.of(alice, lm.adminToken)) {
      assertThrows(PermissionDeniedException.class, () -> lm.service.validateSession(user, alice));
      assertThrows(PermissionDeniedException.class, () -> lm.service.heartbeat(user, backend, 0, 0, List.of()));
      assertThrows(PermissionDeniedException.class, () -> lm.service.registerObjects(user, List.of()));
      assertThrows(PermissionDeniedException.class, () -> lm.service.unregisterObjects(user, List.of("x")));
      assertThrows(PermissionDeniedException.class, () -> lm.service.replicatedObjects(user, backend));
    }
    // a backend speaks for itself only
    assertThrows(PermissionDeniedException.class, () -> lm.service.heartbeat(lm.backendToken, backend, 0, 0, List.of()));
  }

  @Test
  void a_backend_session_needs_a_fresh_unreplayed_proof_of_the_cluster_secret() {
    // setup
    String id = java.util.UUID.randomUUID().toString();
    long now = lm.clock.millis();
    byte[] good = LogicModuleFixture.SECRET.proof(id, now, "n1");
    io.dataclay.common.ClusterSecret other = io.dataclay.common.ClusterSecret.of("another-secret-another-secret-123456");
    long stale = now - BackendProofs.SKEW_MS - 1;
    // run / verify
    NotAuthenticatedException wrong = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newBackendSession(id, now, "n0", other.proof(id, now, "n0")));
    assertTrue(wrong.getMessage().contains("does not match"), wrong.getMessage());
    NotAuthenticatedException old = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newBackendSession(id, stale, "n2", LogicModuleFixture.SECRET.proof(id, stale, "n2")));
    assertTrue(old.getMessage().contains("clock"), old.getMessage());
    CallerSession s = lm.service.newBackendSession(id, now, "n1", good);
    NotAuthenticatedException replay = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newBackendSession(id, now, "n1", good));
    assertTrue(replay.getMessage().contains("replay"), replay.getMessage());
    assertEquals(id, s.backendId());
    // until its ID is registered, the session may register that backend and do nothing else
    assertThrows(io.dataclay.exceptions.BackendDoesNotExistException.class,
        () -> lm.service.validateSession(s.token(), lm.adminToken));
    assertThrows(NotAuthenticatedException.class, () -> lm.service.validateSession(lm.backendToken, s.token()));
    lm.service.registerBackend(s.token(), new io.dataclay.logic.metadata.BackendRecord(id, "backend-new", "127.0.0.1",
        7009, java.util.List.of(io.dataclay.common.Language.PYTHON), "kv"));
    assertTrue(lm.service.validateSession(s.token(), lm.adminToken).admin());
    assertEquals(id, lm.service.validateSession(lm.backendToken, s.token()).backendId());
  }

  @Test
  void repeated_failed_log_ins_lock_the_account_for_a_while_even_with_the_right_password() {
    // setup
    lm.user("alice");
    String pw = LogicModuleFixture.PASSWORD;
    for (int i = 0; i < 5; i++) {
      assertThrows(NotAuthenticatedException.class, () -> lm.service.newSession("alice", "wrong-guess", ""));
    }
    // run
    NotAuthenticatedException locked = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.newSession("alice", pw, ""));
    lm.clock.advance(Duration.ofSeconds(31));
    CallerSession later = lm.service.newSession("alice", pw, "");
    // verify
    assertTrue(locked.getMessage().contains("too many failed attempts"), locked.getMessage());
    assertEquals("alice", later.username());
  }

  @Test
  void a_peer_sending_many_unknown_tokens_is_refused_for_a_while_others_are_not() {
    // setup
    String alice = lm.user("alice");
    lm.peer.set("10.9.9.9");
    for (int i = 0; i < 50; i++) {
      String bogus = "bogus-" + i;
      assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(bogus));
    }
    // run
    NotAuthenticatedException refused = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.getBackends(alice));
    lm.peer.set("10.0.0.2");
    int fromElsewhere = lm.service.getBackends(alice).size();
    lm.peer.set("10.9.9.9");
    lm.clock.advance(Duration.ofSeconds(11));
    int later = lm.service.getBackends(alice).size();
    // verify
    assertTrue(refused.getMessage().contains("10.9.9.9"), refused.getMessage());
    assertEquals(1, fromElsewhere); // the fixture's backend
    assertEquals(1, later);
  }

  @Test
  void a_read_only_contract_lists_the_dataset_as_read_only_and_one_that_expires_ends_by_itself() {
    // setup
    String alice = lm.user("alice");
    lm.user("bob");
    long end = lm.clock.millis() + 10_000;
    lm.service.newDataContract(alice, new io.dataclay.logic.metadata.ContractRecord("alice.shared", "", "bob", true, 0, end));
    // run
    CallerSession before = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "alice.shared");
    String token = before.token();
    lm.clock.advance(Duration.ofSeconds(11));
    // verify
    assertEquals(List.of("alice.shared", "bob"), before.datasets());
    assertEquals(java.util.Set.of("alice.shared"), before.readOnlyDatasets());
    assertEquals(end, before.accessChangesAtMs());
    NotAuthenticatedException ended = assertThrows(NotAuthenticatedException.class,
        () -> lm.service.validateSession(lm.backendToken, token));
    assertTrue(ended.getMessage().contains("no longer granted"), ended.getMessage());
    assertEquals(List.of("bob"), lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "").datasets());
  }

  @Test
  void revoking_a_contract_takes_the_dataset_from_open_sessions_and_only_the_owner_may() {
    // setup
    String alice = lm.user("alice");
    String bob = lm.user("bob");
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.shared", "bob"));
    assertEquals(List.of("alice.shared", "bob"), lm.service.validateSession(lm.backendToken, bob).datasets());
    // run
    assertThrows(PermissionDeniedException.class, () -> lm.service.revokeDataContract(bob, "alice.shared", "bob"));
    lm.service.revokeDataContract(alice, "alice.shared", "bob");
    // verify
    assertEquals(List.of("bob"), lm.service.validateSession(lm.backendToken, bob).datasets());
    assertThrows(AccountDoesNotExistException.class, () -> lm.service.revokeDataContract(alice, "alice.shared", "bob"));
  }

  @Test
  void heartbeats_bring_closed_sessions_and_access_changes_to_backends() {
    // setup
    String alice = lm.user("alice");
    lm.user("bob");
    SessionRevocations.Since first = lm.service.heartbeat(lm.backendToken, registered(), 0, 0, List.of()).sessions();
    // run
    lm.service.closeSession(alice);
    SessionRevocations.Since closed = lm.service.heartbeat(lm.backendToken, lm.backendId, first.epoch(),
        first.seen(), List.of()).sessions();
    lm.service.newDataContract(lm.adminToken, LogicModuleFixture.contract("admin.shared", "bob"));
    SessionRevocations.Since changed = lm.service.heartbeat(lm.backendToken, lm.backendId, closed.epoch(),
        closed.seen(), List.of()).sessions();
    SessionRevocations.Since quiet = lm.service.heartbeat(lm.backendToken, lm.backendId, changed.epoch(),
        changed.seen(), List.of()).sessions();
    // verify
    assertTrue(first.forgetAll(), "a new backend starts from nothing");
    assertEquals(List.of(SessionTokens.sha256(alice)), closed.closedTokenSha256());
    assertFalse(closed.forgetAll());
    assertTrue(changed.forgetAll());
    assertEquals(List.of(), quiet.closedTokenSha256());
    assertFalse(quiet.forgetAll());
  }

  private String registered() {
    lm.service.registerBackend(lm.backendToken, new io.dataclay.logic.metadata.BackendRecord(lm.backendId, "b",
        "127.0.0.1", 7009, List.of(io.dataclay.common.Language.PYTHON), "kv"));
    return lm.backendId;
  }

  @Test
  void a_new_account_needs_a_password_of_at_least_12_characters() {
    InvalidArgumentException shortOne = assertThrows(InvalidArgumentException.class,
        () -> lm.service.newAccount(lm.adminToken, "carol", "elevenchars", false));
    assertTrue(shortOne.getMessage().contains("at least 12"), shortOne.getMessage());
    lm.service.newAccount(lm.adminToken, "carol", "twelve-chars", false);
    assertTrue(lm.store.accounts().find("carol").isPresent());
  }

  @Test
  void an_account_cannot_be_created_twice_or_with_a_malformed_name() {
    // setup
    lm.user("alice");
    // run / verify
    assertThrows(AccountAlreadyExistsException.class,
        () -> lm.service.newAccount(lm.adminToken, "alice", "long-enough-password", false));
    InvalidArgumentException bad = assertThrows(InvalidArgumentException.class,
        () -> lm.service.newAccount(lm.adminToken, "../evil", "long-enough-password", false));
    assertTrue(bad.getMessage().startsWith("username:"), bad.getMessage());
    assertThrows(InvalidArgumentException.class, () -> lm.service.newAccount(lm.adminToken, "carol", "", false));
  }

  @Test
  void bootstrapping_an_existing_administrator_never_changes_its_password() {
    // run
    AccountService.Bootstrap again = lm.service.bootstrapAdministrator("admin", LogicModuleFixture.PASSWORD);
    AccountService.Bootstrap other = lm.service.bootstrapAdministrator("admin", "another-password");
    // verify
    assertEquals(AccountService.Bootstrap.ALREADY_PRESENT, again);
    assertEquals(AccountService.Bootstrap.PRESENT_WITH_OTHER_PASSWORD, other);
    assertTrue(lm.service.newSession("admin", LogicModuleFixture.PASSWORD, "").admin());
    assertThrows(NotAuthenticatedException.class, () -> lm.service.newSession("admin", "another-password", ""));
  }

  @Test
  void the_system_and_backend_accounts_cannot_log_in_by_password() {
    // run
    AccountRecord system = lm.store.accounts().find(AccountService.SYSTEM_ACCOUNT).orElseThrow();
    AccountRecord backends = lm.store.accounts().find(AccountService.BACKEND_ACCOUNT).orElseThrow();
    // verify
    assertFalse(Passwords.matches(backends, ""));
    assertThrows(InvalidArgumentException.class,
        () -> lm.service.newSession(AccountService.BACKEND_ACCOUNT, Passwords.LOCKED, ""));
    assertFalse(Passwords.matches(system, ""));
    assertFalse(Passwords.matches(system, Passwords.LOCKED));
    assertThrows(InvalidArgumentException.class,
        () -> lm.service.newSession(AccountService.SYSTEM_ACCOUNT, Passwords.LOCKED, ""));
  }
}
