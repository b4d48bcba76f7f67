package io.dataclay.server;

import io.dataclay.rpc.TlsSettings;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Whether the caller of the call being served presented a certificate that the cluster CA
 * verifies, which only dataClay servers have: user clients connect without one. Servers built by
 * {@link ServerTransport} let a caller present no certificate (client authentication is
 * optional), so this is how server code tells another server from a user. The answer comes from
 * the call's TLS session: the chain the peer presented is validated here against the CA (PKIX,
 * now, with the clientAuth usage), whatever the TLS engine made of it, once per TLS session. In
 * plaintext it is always false.
 */
public final class PeerCertificates {
  private static final Context.Key<Peer> PEER = Context.key("dataclay-tls-peer");
  private static final String VERDICT = "dataclay.peer-verified-by-cluster-ca";
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

  private PeerCertificates() {}

  /**
   * Whether the caller of the call being served on this thread presented a certificate the cluster
   * CA verifies (false outside a call, in plaintext, or on a server without {@link #serverInterceptor}).
   * Like {@link io.dataclay.rpc.SessionMetadata#currentToken()} it reads the call's gRPC {@link Context}: ask on the
   * thread serving the call, or carry the context along ({@code Context.current().wrap(...)}).
   */
  public static boolean callerIsClusterServer() {
    Peer peer = PEER.get();
    return peer != null && peer.verified();
  }

  /** Server side: makes each call's TLS peer visible to {@link #callerIsClusterServer()}, checked against {@code tls}'s CA. */
  public static ServerInterceptor serverInterceptor(TlsSettings tls) {
    List<X509Certificate> cas = tls.caCertificates();
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        if (session == null || cas.isEmpty()) {
          return next.startCall(call, headers); // plaintext: nobody is verified
        }
        return Contexts.interceptCall(Context.current().withValue(PEER, new Peer(session, cas)), call, headers, next);
      }
    };
  }

  /** One call's TLS session and the CA its peer's chain must lead to. */
  private record Peer(SSLSession session, List<X509Certificate> cas) {
    boolean verified() {
      Object known = session.getValue(VERDICT);
      if (known instanceof Boolean) {
        return (Boolean) known;
      }
      boolean verdict = validates(presented(session), cas);
      session.putValue(VERDICT, verdict);
      return verdict;
    }
  }

  private static List<X509Certificate> presented(SSLSession session) {
    List<X509Certificate> chain = new ArrayList<>();
    try {
      for (Certificate c : session.getPeerCertificates()) {
        if (c instanceof X509Certificate) {
          chain.add((X509Certificate) c);
        }
      }
    } catch (SSLPeerUnverifiedException e) {
      return List.of(); // no certificate, or one the TLS engine did not accept
    }
    return chain;
  }

  /** Whether {@code chain} (leaf first) leads to one of {@code cas} now and may authenticate a client. */
  static boolean validates(List<X509Certificate> chain, List<X509Certificate> cas) {
    if (chain.isEmpty()) {
      return false;
    }
    try {
      List<String> usages = chain.get(0).getExtendedKeyUsage();
      if (usages != null && !usages.contains(CLIENT_AUTH)) {
        return false;
      }
      Set<TrustAnchor> anchors = new HashSet<>();
      for (X509Certificate ca : cas) {
        anchors.add(new TrustAnchor(ca, null));
      }
      List<X509Certificate> path = new ArrayList<>(chain);
      path.removeIf(cas::contains); // the anchor itself is not part of a path
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false); // a private cluster CA publishes no revocation lists
      CertPathValidator.getInstance("PKIX")
          .validate(CertificateFactory.getInstance("X.509").generateCertPath(path), params);
      return true;
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
