package io.dataclay.server;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.function.Consumer;

/**
 * Counts every call of a service by its RPC's bare name ("GetStats"), once, when the method itself
 * runs: for an RPC whose client sends one request, when that request has arrived whole (so a call
 * refused before, a malformed request or a cancelled one, is not counted); for a client-streaming
 * RPC, when the call starts. Installed innermost, next to the service, by {@link GrpcServer}.
 */
public final class CallCounting implements ServerInterceptor {
  private final Consumer<String> count;

  /** An interceptor handing each call's RPC name to {@code count}. */
  public CallCounting(Consumer<String> count) {
    this.count = count;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    String rpc = call.getMethodDescriptor().getBareMethodName();
    if (!call.getMethodDescriptor().getType().clientSendsOneMessage()) {
      count.accept(rpc);
      return next.startCall(call, headers);
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
      private int requests;

      @Override
      public void onMessage(Q message) {
        requests++;
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        // grpc-java runs the method here only when exactly one request came
        if (requests == 1) {
          count.accept(rpc);
        }
        super.onHalfClose();
      }
    };
  }
}
