package io.dataclay.server;

import io.dataclay.proto.Empty;
import io.dataclay.rpc.GrpcErrors;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Answers calls, for every servicer of both servers: a unary call at once or from a future's
 * callback (no thread waits for the result), and any call's failure as its mapped status. An
 * answer to a caller that cancelled or went away is dropped.
 */
public final class Replies {
  private Replies() {}

  /** Answers with {@code body}'s value, or the mapped error of what it threw. */
  public static <T> void now(StreamObserver<T> observer, Supplier<T> body) {
    T value;
    try {
      value = body.get();
    } catch (Throwable t) {
      fail(observer, t);
      return;
    }
    succeed(observer, value);
  }

  /** Runs {@code work} and answers Empty, or the mapped error of what it threw. */
  public static void done(StreamObserver<Empty> observer, Runnable work) {
    now(observer, () -> {
      work.run();
      return Empty.getDefaultInstance();
    });
  }

  /**
   * Answers when the future of {@code start} completes; errors thrown by {@code start} itself are
   * answered at once.
   */
  public static <V, T> void later(StreamObserver<T> observer, Supplier<CompletableFuture<V>> start, Function<V, T> toReply) {
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

  /**
   * Fails the call with the status for {@code t} (unwrapping a future's CompletionException or
   * ExecutionException to what it wraps).
   */
  public static void fail(StreamObserver<?> observer, Throwable t) {
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
