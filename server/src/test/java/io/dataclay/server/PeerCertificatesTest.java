package io.dataclay.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.rpc.TlsFixtures;
import org.junit.jupiter.api.Test;

class PeerCertificatesTest {
  @Test
  void only_a_current_chain_to_the_cluster_ca_counts_as_a_cluster_server() {
    var cas = TlsFixtures.pem("DATACLAY_TLS_CA", "ca.pem").certificates();
    assertTrue(PeerCertificates.validates(TlsFixtures.pem("c", "peer.pem").certificates(), cas));
    assertFalse(PeerCertificates.validates(TlsFixtures.pem("c", "stranger.pem").certificates(), cas));
    assertFalse(PeerCertificates.validates(TlsFixtures.pem("c", "expired.pem").certificates(), cas));
    assertFalse(PeerCertificates.validates(java.util.List.of(), cas));
  }
}
