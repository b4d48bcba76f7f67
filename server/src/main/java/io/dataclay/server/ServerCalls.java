package io.dataclay.server;

import io.dataclay.rpc.GrpcErrors;
import io.grpc.stub.StreamObserver;
import java.util.function.Supplier;

/** Runs a unary call's logic and answers it: the value, or the mapped error. */
public final class ServerCalls {
  private ServerCalls() {}

  /** Answers {@code observer} with {@code body}'s value, or with the status for what it threw. */
  public static <T> void respond(StreamObserver<T> observer, Supplier<T> body) {
    T value;
    try {
      value = body.get();
    } catch (Throwable t) {
      observer.onError(GrpcErrors.toStatus(t));
      return;
    }
    observer.onNext(value);
    observer.onCompleted();
  }
}
