package io.dataclay.server;

import io.dataclay.common.RateLimitedLog;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.TlsSettings;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Where and how a dataClay server listens: on one address (the host it advertises, or the bind
 * host configured; never every interface unless that is what was configured, e.g. 0.0.0.0), with
 * the credentials of its {@link TlsSettings}, and making each call's TLS peer visible to
 * {@link PeerCertificates}, serving {@link LivenessService}. The Logic Module and the Data Service both
 * build their servers here.
 */
public final class ServerTransport {
  // gRPC writes a line and a stack trace for every connection that does not speak HTTP/2 (a port
  // scan, bytes of garbage): anyone who reaches the port could fill the disk with them. Held here
  // so that java.util.logging keeps the loggers and their limits.
  private static final List<Logger> LIMITED = List.of(
      RateLimitedLog.limit("io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport.connections"));

  private ServerTransport() {}

  /**
   * A server builder listening on {@code bindHost:port} (port 0: any free port).
   *
   * @throws InvalidArgumentException naming {@code bindSetting} when the host does not resolve
   */
  public static NettyServerBuilder builder(String bindHost, int port, TlsSettings tls, String bindSetting) {
    InetSocketAddress address = new InetSocketAddress(bindAddress(bindHost, bindSetting), port);
    return NettyServerBuilder.forAddress(address, tls.serverCredentials())
        // clients ping a connection a call waits on every third of their DATACLAY_UNREACHABLE_MS (a
        // 1.2 s default) to tell a slow server from a lost one: answering them is cheap, refusing them
        // (gRPC's default above one per 5 min) would close the connection under the call
        .permitKeepAliveTime(100, TimeUnit.MILLISECONDS)
        .permitKeepAliveWithoutCalls(true)
        .addService(MalformedRequests.guard(new LivenessService().bindService()))
        .intercept(PeerCertificates.serverInterceptor(tls));
  }

  /**
   * The address {@code bindHost} names, for a server to listen on.
   *
   * @throws InvalidArgumentException naming {@code bindSetting} when the host does not resolve
   */
  public static InetAddress bindAddress(String bindHost, String bindSetting) {
    try {
      return InetAddress.getByName(bindHost);
    } catch (UnknownHostException e) {
      throw new InvalidArgumentException("cannot listen on " + bindHost + " (" + bindSetting + "): the host name "
          + "does not resolve to an address of this machine");
    }
  }

  /** Whether {@code host} means every interface (0.0.0.0 or ::). */
  public static boolean isWildcard(String host) {
    try {
      return InetAddress.getByName(host).isAnyLocalAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
