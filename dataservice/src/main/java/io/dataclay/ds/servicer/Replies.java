package io.dataclay.ds.servicer;

import io.dataclay.rpc.GrpcErrors;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/** Answers unary calls: at once, or from a future's callback (no thread waits for the result). */
final class Replies {
  private Replies() {}

  /** Answers with {@code body}'s value, or the mapped error of what it threw. */
  static <T> void now(StreamObserver<T> observer, Supplier<T> body) {
    T value;
    try {
      value = body.get();
    } catch (Throwable t) {
      fail(observer, t);
      return;
    }
    succeed(observer, value);
  }

  /**
   * Answers when the future of {@code start} completes; errors thrown by {@code start} itself are
   * answered at once.
   */
  static <V, T> void later(StreamObserver<T> observer, Supplier<CompletableFuture<V>> start, Function<V, T> toReply) {
    CompletableFuture<V> future;
    try {
      future = start.get();
    } catch (Throwable t) {
      fail(observer, t);
      return;
    }
    future.whenComplete((value, error) -> {
      if (error != null) {
        fail(observer, error);
        return;
      }
      T reply;
      try {
        reply = toReply.apply(value);
      } catch (Throwable t) {
        fail(observer, t);
        return;
      }
      succeed(observer, reply);
    });
  }

  private static <T> void succeed(StreamObserver<T> observer, T value) {
    try {
      observer.onNext(value);
      observer.onCompleted();
    } catch (RuntimeException cancelled) {
      // The client cancelled or went away: there is nobody left to answer.
    }
  }

  private static void fail(StreamObserver<?> observer, Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    try {
      observer.onError(GrpcErrors.toStatus(cause));
    } catch (RuntimeException cancelled) {
      // The client cancelled or went away: there is nobody left to answer.
    }
  }
}
