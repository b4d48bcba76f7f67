package io.dataclay.rpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.function.Supplier;

/**
 * The session metadata every authenticated call carries, and the interceptors that put it on
 * outgoing calls and make it visible to server logic through {@link #currentToken()}.
 */
public final class SessionMetadata {
  /** Session token of the caller. */
  public static final Metadata.Key<String> SESSION_KEY =
      Metadata.Key.of("dataclay-session", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Set ("1") on a call that model code made from inside a backend (relayed by its Data Service):
   * such a call does not wait for its object's turn, so calls that call each other never wait in a
   * cycle (see the Data Service's ObjectTurns).
   */
  public static final Metadata.Key<String> NESTED_KEY = Metadata.Key.of("dataclay-nested", Metadata.ASCII_STRING_MARSHALLER);

  private static final Context.Key<String> TOKEN = Context.key("dataclay-session");
  private static final Context.Key<Boolean> NESTED = Context.key("dataclay-nested");
  private static final Context.Key<String> PEER = Context.key("dataclay-peer");

  private SessionMetadata() {}

  /** The session token of the call being served, or null when it carried none. */
  public static String currentToken() {
    return TOKEN.get();
  }

  /** Whether the call being served was made by model code inside a backend (see {@link #NESTED_KEY}). */
  public static boolean currentCallIsNested() {
    return Boolean.TRUE.equals(NESTED.get());
  }

  /**
   * The network address (without port) of the peer of the call being served, for throttling and
   * messages; "unknown" outside a call or for in-process transports.
   */
  public static String currentPeer() {
    String peer = PEER.get();
    return peer == null ? "unknown" : peer;
  }

  /** Server side: copies the session metadata and the peer's address of each call into its {@link Context}. */
  public static ServerInterceptor serverInterceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Context ctx = Context.current().withValue(TOKEN, headers.get(SESSION_KEY))
            .withValue(NESTED, "1".equals(headers.get(NESTED_KEY)))
            .withValue(PEER, peerOf(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)));
        return Contexts.interceptCall(ctx, call, headers, next);
      }
    };
  }

  private static String peerOf(SocketAddress address) {
    if (address instanceof InetSocketAddress inet) {
      return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
    }
    return address == null ? "unknown" : address.toString();
  }

  /** Client side: adds {@code token.get()} (when not null) to every outgoing call. */
  public static ClientInterceptor clientInterceptor(Supplier<String> token) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            String t = token.get();
            if (t != null) {
              headers.put(SESSION_KEY, t);
            }
            super.start(listener, headers);
          }
        };
      }
    };
  }
}
