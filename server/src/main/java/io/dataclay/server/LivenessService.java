package io.dataclay.server;

import io.dataclay.proto.Empty;
import io.dataclay.proto.LivenessGrpc;
import io.grpc.stub.StreamObserver;

/**
 * The Liveness service every dataClay server runs: Ping answers at once and needs no session, so
 * a caller can tell a server that is slow to answer a call from one it cannot reach at all.
 */
public final class LivenessService extends LivenessGrpc.LivenessImplBase {
  private static final Empty EMPTY = Empty.getDefaultInstance();

  /** Answers at once; never blocks, so it may run on a transport thread. */
  @Override
  public void ping(Empty request, StreamObserver<Empty> observer) {
    observer.onNext(EMPTY);
    observer.onCompleted();
  }
}
