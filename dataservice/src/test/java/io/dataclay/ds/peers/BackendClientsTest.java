package io.dataclay.ds.peers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.rpc.TlsSettings;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BackendClientsTest {
  private final AtomicInteger lookups = new AtomicInteger();
  private final BackendClients clients = new BackendClients(() -> {
    lookups.incrementAndGet();
    return List.of(BackendInfo.newBuilder().setId("b1").setHost("127.0.0.1").setPort(1).build());
  }, TlsSettings.plaintext(), () -> "token");

  @AfterEach
  void closeClients() {
    clients.close();
  }

  @Test
  void aBackendIsLookedUpOnceWhileItAnswers() {
    DataServiceClient first = clients.call("b1", c -> c);
    DataServiceClient second = clients.call("b1", c -> c);
    assertSame(first, second);
    assertEquals(1, lookups.get());
  }

  @Test
  void aBackendThatFailsToAnswerIsLookedUpAgainOnTheNextCall() {
    DataServiceClient first = clients.call("b1", c -> c);
    assertThrows(BackendUnavailableException.class, () -> clients.call("b1", c -> {
      throw new BackendUnavailableException("gone");
    }));
    DataServiceClient next = clients.call("b1", c -> c);
    assertNotSame(first, next);
    assertEquals(2, lookups.get());
  }

  @Test
  void anUnknownBackendIsAClearError() {
    BackendDoesNotExistException e = assertThrows(BackendDoesNotExistException.class, () -> clients.call("nope", c -> c));
    assertEquals("no backend nope is registered", e.getMessage());
  }
}
