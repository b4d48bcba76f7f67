package io.dataclay.rpc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.BackendUnavailableException;
import io.grpc.Status;
import java.io.IOException;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class GrpcErrorsTest {
  @Test
  void a_call_to_a_port_nobody_listens_on_never_reached_a_server() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    DataServiceClient client = new DataServiceClient("127.0.0.1", port, TlsSettings.plaintext(), () -> "token");
    try {
      BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
          () -> client.callMethod("00000000-0000-0000-0000-000000000001", "m", new byte[0]));
      assertTrue(e.connectFailed(), e.getMessage());
    } finally {
      client.close();
    }
  }

  @Test
  void a_call_cut_off_after_it_was_sent_may_have_run() {
    BackendUnavailableException e = (BackendUnavailableException) GrpcErrors.fromStatus(
        Status.UNAVAILABLE.withDescription("io exception").withCause(new IOException("Connection reset by peer"))
            .asRuntimeException());
    assertFalse(e.connectFailed());
  }

  @Test
  void a_deadline_is_never_taken_for_a_refused_connection() {
    BackendUnavailableException e = (BackendUnavailableException) GrpcErrors.fromStatus(
        Status.DEADLINE_EXCEEDED.withCause(new java.net.ConnectException("refused")).asRuntimeException());
    assertFalse(e.connectFailed());
  }
}
