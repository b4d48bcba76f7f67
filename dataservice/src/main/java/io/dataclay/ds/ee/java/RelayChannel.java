package io.dataclay.ds.ee.java;

import io.dataclay.proto.RelayReply;
import io.dataclay.rpc.GrpcErrors;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.concurrent.Executor;

/**
 * A gRPC channel whose unary calls go over the link, for the Data Service to make in the session
 * of the call being run ({@code relay}); this process never sees a token and has no network. The
 * generated stubs and the dataClay clients work on it unchanged. Streaming calls are not relayed.
 */
final class RelayChannel extends Channel {
  private final LinkEndpoint link;
  private final long callId;
  private final String backendId;

  /** Calls for call {@code callId}, to {@code backendId}'s Data Service (empty: the Logic Module). */
  RelayChannel(LinkEndpoint link, long callId, String backendId) {
    this.link = link;
    this.callId = callId;
    this.backendId = backendId;
  }

  @Override
  public String authority() {
    return "relay";
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    Executor deliver = options.getExecutor() != null ? options.getExecutor() : Runnable::run;
    return new ClientCall<>() {
      private Listener<R> listener;
      private byte[] request;

      @Override
      public void start(Listener<R> responses, Metadata headers) {
        listener = responses;
      }

      @Override
      public void request(int numMessages) {}

      @Override
      public void cancel(String message, Throwable cause) {}

      @Override
      public void sendMessage(Q message) {
        try {
          request = method.streamRequest(message).readAllBytes();
        } catch (IOException e) {
          throw new IllegalStateException("could not encode a relayed request", e);
        }
      }

      @Override
      public void halfClose() {
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
          deliver.execute(() -> listener.onClose(Status.UNIMPLEMENTED.withDescription(
              "only unary calls are available inside a backend"), new Metadata()));
          return;
        }
        RelayReply reply;
        try {
          reply = link.relay(callId, backendId, method.getFullMethodName(), request == null ? new byte[0] : request);
        } catch (RuntimeException e) {
          Metadata trailers = new Metadata();
          trailers.put(GrpcErrors.ERROR_KEY, GrpcErrors.info(e).toByteArray());
          deliver.execute(() -> listener.onClose(Status.UNAVAILABLE.withDescription(e.getMessage()), trailers));
          return;
        }
        deliver.execute(() -> {
          Status status = Status.fromCodeValue(reply.getStatusCode());
          Metadata trailers = new Metadata();
          if (status.isOk()) {
            listener.onHeaders(new Metadata());
            listener.onMessage(method.parseResponse(new ByteArrayInputStream(reply.getResponse().toByteArray())));
          } else {
            status = status.withDescription(reply.getStatusMessage());
            if (reply.hasError()) {
              trailers.put(GrpcErrors.ERROR_KEY, reply.getError().toByteArray());
            }
          }
          listener.onClose(status, trailers);
        });
      }
    };
  }
}
