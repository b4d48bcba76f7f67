package io.dataclay.logic.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.AccountAlreadyExistsException;
import io.dataclay.exceptions.AccountDoesNotExistException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.testing.LogicModuleFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class AccountAndSessionRulesTest {
  @TempDir
  Path dir;
  private String url;
  private LogicModuleFixture lm;

  @BeforeEach
  void start() {
    url = "jdbc:sqlite:" + dir.resolve("metadata.db");
    lm = new LogicModuleFixture(url);
  }

  @AfterEach
  void stop() {
    lm.close();
  }

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
    Session s = lm.service.newSession("admin", LogicModuleFixture.PASSWORD, "");
    // verify
    assertEquals(32, Base64.getUrlDecoder().decode(s.token()).length);
    assertTrue(lm.store.sessions().find(SessionTokens.sha256(s.token())).isPresent());
    assertTrue(lm.store.sessions().find(s.token()).isEmpty());
    assertEquals(lm.clock.millis() + LogicModuleFixture.SESSION_TTL.toMillis(), s.expiresAtMs());
  }

  @Test
  void passwords_are_stored_as_salted_pbkdf2_with_at_least_100k_iterations() {
    // setup
    lm.service.newAccount(lm.adminToken, "alice", "same", false);
    lm.service.newAccount(lm.adminToken, "bob", "same", false);
    // run
    AccountRecord a = lm.store.accounts().find("alice").orElseThrow();
    AccountRecord b = lm.store.accounts().find("bob").orElseThrow();
    // verify
    assertTrue(a.passwordIterations() >= 100_000);
    assertNotEquals(a.passwordSalt(), b.passwordSalt());
    assertNotEquals(a.passwordHash(), b.passwordHash());
    assertFalse(a.passwordHash().contains("same"));
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
  void a_missing_or_unknown_token_is_not_authenticated() {
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(null));
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends(""));
    assertThrows(NotAuthenticatedException.class, () -> lm.service.getBackends("bogus"));
  }

  @Test
  void sessions_survive_a_restart_of_the_logic_module() {
    // setup
    String token = lm.user("alice");
    lm.close();
    // run
    lm = new LogicModuleFixture(url, lm.clock);
    // verify
    assertEquals("alice", lm.service.validateSession(lm.adminToken, token).username());
  }

  @Test
  void a_session_defaults_to_the_users_own_dataset_and_lists_granted_ones() {
    // setup
    String alice = lm.user("alice");
    lm.user("bob");
    lm.service.newDataContract(alice, "shared", "bob");
    // run
    Session bob = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "");
    Session bobOnShared = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "shared");
    // verify
    assertEquals("bob", bob.dataset());
    assertEquals(List.of("bob", "shared"), bob.datasets());
    assertEquals("shared", bobOnShared.dataset());
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
    lm.service.newDataContract(alice, "shared", "bob");
    // run / verify
    assertThrows(PermissionDeniedException.class, () -> lm.service.newDataContract(bob, "shared", "bob"));
    assertThrows(PermissionDeniedException.class, () -> lm.service.newDataContract(bob, "alice", "bob"));
    assertThrows(AccountDoesNotExistException.class, () -> lm.service.newDataContract(alice, "shared", "carol"));
    assertEquals(List.of("alice", "shared"), lm.service.validateSession(lm.adminToken, alice).datasets());
  }

  @Test
  void administrator_only_calls_are_refused_to_other_users() {
    // setup
    String alice = lm.user("alice");
    // run / verify
    assertThrows(PermissionDeniedException.class, () -> lm.service.newAccount(alice, "bob", "pw", false));
    assertThrows(PermissionDeniedException.class, () -> lm.service.validateSession(alice, alice));
    assertThrows(PermissionDeniedException.class, () -> lm.service.heartbeat(alice, lm.backend(7001)));
    assertThrows(PermissionDeniedException.class, () -> lm.service.registerObjects(alice, List.of(), "", ""));
    assertTrue(lm.store.accounts().find("bob").isEmpty());
  }

  @Test
  void an_account_cannot_be_created_twice_or_with_a_malformed_name() {
    // setup
    lm.user("alice");
    // run / verify
    assertThrows(AccountAlreadyExistsException.class, () -> lm.service.newAccount(lm.adminToken, "alice", "x", false));
    InvalidArgumentException bad = assertThrows(InvalidArgumentException.class,
        () -> lm.service.newAccount(lm.adminToken, "../evil", "x", false));
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
  void the_system_account_is_an_administrator_that_cannot_log_in_by_password() {
    // run
    AccountRecord system = lm.store.accounts().find(AccountService.SYSTEM_ACCOUNT).orElseThrow();
    // verify
    assertTrue(system.admin());
    assertFalse(Passwords.matches(system, ""));
    assertFalse(Passwords.matches(system, Passwords.LOCKED));
    assertThrows(InvalidArgumentException.class,
        () -> lm.service.newSession(AccountService.SYSTEM_ACCOUNT, Passwords.LOCKED, ""));
  }
}
