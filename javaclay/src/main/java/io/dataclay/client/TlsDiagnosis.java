package io.dataclay.client;

import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.TlsSettings;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.net.ConnectException;
import java.net.UnknownHostException;

/**
 * Replaces the description of a call that failed because the connection could not be secured
 * (a plaintext client and a TLS server, an unknown CA, an expired certificate, a TLS client and
 * a plaintext server) by one that names the cause, found by {@link TlsProbe}. Only a failed
 * connection is looked into: a refused connection, an unknown host or any answer of the server
 * pass unchanged, and successful calls cost one forwarding wrapper.
 *
 * @param host the server's host, probed when a call to it fails
 * @param port the server's port
 * @param tls how the channel to it is secured
 */
record TlsDiagnosis(String host, int port, TlsSettings tls) implements ClientInterceptor {
  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
          @Override
          public void onClose(Status status, Metadata trailers) {
            super.onClose(explained(status, trailers), trailers);
          }
        }, headers);
      }
    };
  }

  private Status explained(Status status, Metadata trailers) {
    if (status.getCode() != Status.Code.UNAVAILABLE || trailers.containsKey(GrpcErrors.ERROR_KEY)
        || neverConnected(status.getCause())) {
      return status;
    }
    String cause = TlsProbe.explain(host, port, tls);
    return cause == null ? status : Status.UNAVAILABLE.withDescription(cause).withCause(status.getCause());
  }

  private static boolean neverConnected(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof ConnectException || t instanceof UnknownHostException) {
        return true;
      }
    }
    return false;
  }
}
