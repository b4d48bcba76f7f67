package io.dataclay.client;

import io.dataclay.rpc.TlsSettings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Finds out why a connection to a server could not be secured, with a TLS handshake of its own
 * (no request is sent): whether the server speaks TLS at all, and if so whether its certificate
 * is signed by the cluster CA, is within its validity period and names the host dialled. A
 * client without a CA only looks at whether the server speaks TLS: it trusts no certificate.
 */
final class TlsProbe {
  private static final int TIMEOUT_MS = 3000;

  private TlsProbe() {}

  /** Why a connection to {@code host:port} with {@code tls} cannot be secured, or null if TLS is not the problem. */
  static String explain(String host, int port, TlsSettings tls) {
    String where = "the server at " + host + ":" + port;
    Recorder recorder;
    SSLSocket socket;
    try {
      recorder = new Recorder(tls.enabled() ? caTrust(tls) : null);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {recorder}, null);
      socket = (SSLSocket) context.getSocketFactory().createSocket();
    } catch (GeneralSecurityException | IOException e) {
      return null;
    }
    try (Socket closing = socket) {
      try {
        socket.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
      } catch (IOException e) {
        return null; // not reachable: nothing to say about TLS
      }
      socket.setSoTimeout(TIMEOUT_MS);
      SSLParameters params = socket.getSSLParameters();
      params.setEndpointIdentificationAlgorithm("HTTPS");
      params.setApplicationProtocols(new String[] {"h2"});
      socket.setSSLParameters(params);
      socket.startHandshake();
      return tls.enabled() ? null : requiresTls(where, recorder.chain);
    } catch (IOException e) {
      return verdict(where, host, tls, recorder, e);
    }
  }

  private static String verdict(String where, String host, TlsSettings tls, Recorder recorder, IOException failure) {
    X509Certificate[] chain = recorder.chain;
    if (chain == null || chain.length == 0) {
      return tls.enabled() ? where + " does not speak TLS (a plaintext server?), but this client requires TLS ("
          + tls.ca() + ")" : null;
    }
    if (!tls.enabled()) {
      return requiresTls(where, chain);
    }
    X509Certificate leaf = chain[0];
    if (!signedBy(leaf, tls.caCertificates())) {
      return where + " presents a certificate (" + leaf.getSubjectX500Principal().getName() + ", issued by "
          + leaf.getIssuerX500Principal().getName() + ") that the cluster CA in " + tls.ca()
          + " did not sign: unknown CA";
    }
    try {
      leaf.checkValidity();
    } catch (CertificateExpiredException e) {
      return where + " presents a certificate (" + leaf.getSubjectX500Principal().getName() + ") that expired on "
          + leaf.getNotAfter().toInstant() + ": certificate expired";
    } catch (CertificateNotYetValidException e) {
      return where + " presents a certificate (" + leaf.getSubjectX500Principal().getName()
          + ") that is not valid before " + leaf.getNotBefore().toInstant() + ": certificate not yet valid";
    }
    Throwable root = recorder.rejection != null ? recorder.rejection : failure;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    String reason = String.valueOf(root.getMessage());
    if (reason.startsWith("No subject alternative") || reason.startsWith("No name matching")) {
      return where + " presents a certificate (" + leaf.getSubjectX500Principal().getName() + ") that does not name "
          + host + ": host name mismatch";
    }
    return where + " presents a certificate (" + leaf.getSubjectX500Principal().getName()
        + ") signed by the cluster CA but refused: " + reason;
  }

  private static String requiresTls(String where, X509Certificate[] chain) {
    return where + " requires TLS (it presents the certificate of " + chain[0].getSubjectX500Principal().getName()
        + "), but this client connects in plaintext: give it the cluster's CA certificate (DATACLAY_TLS_CA)";
  }

  private static boolean signedBy(X509Certificate leaf, List<X509Certificate> cas) {
    for (X509Certificate ca : cas) {
      try {
        leaf.verify(ca.getPublicKey());
        return true;
      } catch (GeneralSecurityException e) {
        // not this one
      }
    }
    return false;
  }

  private static X509ExtendedTrustManager caTrust(TlsSettings tls) throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int n = 0;
    for (X509Certificate ca : tls.caCertificates()) {
      store.setCertificateEntry("ca-" + n++, ca);
    }
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    for (TrustManager tm : factory.getTrustManagers()) {
      if (tm instanceof X509ExtendedTrustManager) {
        return (X509ExtendedTrustManager) tm;
      }
    }
    throw new GeneralSecurityException("no X509ExtendedTrustManager");
  }

  /** Keeps the server's chain; trusts it only as far as the CA's trust manager does (nothing without a CA). */
  private static final class Recorder extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager ca;
    private volatile X509Certificate[] chain;
    private volatile CertificateException rejection;

    Recorder(X509ExtendedTrustManager ca) {
      this.ca = ca;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] presented, String authType, Socket socket)
        throws CertificateException {
      chain = presented;
      if (ca == null) {
        throw new CertificateException("no CA configured: nothing is trusted");
      }
      try {
        ca.checkServerTrusted(presented, authType, socket);
      } catch (CertificateException e) {
        rejection = e;
        throw e;
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] presented, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("the probe uses a socket");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] presented, String authType) throws CertificateException {
      throw new CertificateException("the probe checks the host name");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] presented, String authType, Socket socket)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] presented, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] presented, String authType) throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return ca == null ? new X509Certificate[0] : ca.getAcceptedIssuers();
    }
  }
}
