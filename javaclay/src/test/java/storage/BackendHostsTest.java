package storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.BackendInfo;
import io.dataclay.common.Language;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class BackendHostsTest {
  private static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
  private static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");
  private static final UUID C = UUID.fromString("00000000-0000-0000-0000-00000000000c");
  private static final UUID D = UUID.fromString("00000000-0000-0000-0000-00000000000d");

  // Two backends on node1, one on node2.example.org, one dead on this machine (127.0.0.1).
  private final BackendHosts hosts = new BackendHosts(List.of(
      backend(B, "backend-2", "node1.example.org", true),
      backend(A, "backend-1", "node1.example.org", true),
      backend(C, "backend-3", "node2.example.org", true),
      backend(D, "backend-4", "127.0.0.1", false)),
      h -> h.equals("127.0.0.1") || h.equals("localhost") || h.equals("thismachine"));

  @Test
  void aHostNameNamesTheFirstByNameOfItsBackendsUnlessAnotherIsPreferred() throws Exception {
    // run + verify
    assertEquals(A, hosts.pick("node1.example.org", id -> true));
    assertEquals(A, hosts.pick("NODE1.example.org", id -> true));
    assertEquals(B, hosts.pick("node1.example.org", id -> !id.equals(A)));
  }

  @Test
  void anUnqualifiedNameMatchesTheQualifiedHost() throws Exception {
    // run + verify
    assertEquals(C, hosts.pick("node2", id -> true));
    assertTrue(BackendHosts.sameHost("node2.example.org", "node2"));
    assertFalse(BackendHosts.sameHost("node2.example.org", "node"));
    assertFalse(BackendHosts.sameHost("10.0.0.1", "10"));
  }

  @Test
  void backendIdsAndNamesNameTheirBackendBeforeAnyHostMatch() throws Exception {
    // run + verify
    assertEquals(B, hosts.pick(B.toString(), id -> false));
    assertEquals(C, hosts.pick("Backend-3", id -> false));
  }

  @Test
  void namesOfThisMachineMatchBackendsOnThisMachine() throws Exception {
    // run + verify
    assertEquals(D, hosts.pick("localhost", id -> true));
    assertEquals(D, hosts.pick("thismachine", id -> true));
  }

  @Test
  void aLiveBackendIsChosenBeforeADeadOneEvenIfTheDeadOneIsPreferred() throws Exception {
    // setup: both on one host, the preferred one dead
    BackendHosts two = new BackendHosts(List.of(backend(A, "a", "n", false), backend(B, "b", "n", true)), h -> false);
    // run + verify
    assertEquals(B, two.pick("n", Set.of(A)::contains));
  }

  @Test
  void aHostNamingNoBackendFailsListingTheBackends() {
    // run
    StorageException e = assertThrows(StorageException.class, () -> hosts.pick("node9", id -> true));
    // verify
    assertTrue(e.getMessage().contains("'node9' names no dataClay backend"), e.getMessage());
    assertTrue(e.getMessage().contains("backend-3 (node2.example.org, " + C + ")"), e.getMessage());
  }

  @Test
  void locationsBecomeTheirHostsInOrderEachOnceLeavingUnknownBackendsOut() {
    // run
    List<String> out = hosts.hostsOf(List.of(C, A, UUID.randomUUID(), B, D));
    // verify
    assertEquals(List.of("node2.example.org", "node1.example.org", "127.0.0.1"), out);
  }

  @Test
  void thisMachineIsRecognisedByLoopbackAndLocalhostButNotByAForeignAddress() {
    // run + verify
    assertTrue(BackendHosts.isThisMachine("localhost"));
    assertTrue(BackendHosts.isThisMachine("127.0.0.1"));
    assertTrue(BackendHosts.isThisMachine("::1"));
    assertFalse(BackendHosts.isThisMachine("192.0.2.1"));
    assertFalse(BackendHosts.isThisMachine("node9.invalid"));
  }

  private static BackendInfo backend(UUID id, String name, String host, boolean alive) {
    return new BackendInfo(id, name, host, 7000, List.of(Language.JAVA), alive);
  }
}
