package io.dataclay.ds.servicer;

import io.dataclay.ds.ee.PythonEnvironment;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecutionEnvironmentLinkGrpc;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The ExecutionEnvironmentLink gRPC adapter: hands an Attach stream carrying the right
 * {@code dataclay-ee-secret} to the Python environment; refuses everything else.
 */
public final class ExecutionEnvironmentLinkServicer extends ExecutionEnvironmentLinkGrpc.ExecutionEnvironmentLinkImplBase {
  private final PythonEnvironment python;

  /** The adapter for {@code python}, or for no environment at all (null: every Attach is refused). */
  public ExecutionEnvironmentLinkServicer(PythonEnvironment python) {
    this.python = python;
  }

  @Override
  public StreamObserver<EnvironmentMessage> attach(StreamObserver<DataServiceMessage> toEnvironment) {
    String secret = SessionMetadata.currentEeSecret();
    try {
      if (python == null) {
        throw new NotAuthenticatedException("this Data Service runs no Python execution environment");
      }
      return python.attach(secret, (ServerCallStreamObserver<DataServiceMessage>) toEnvironment);
    } catch (RuntimeException refused) {
      toEnvironment.onError(GrpcErrors.toStatus(refused));
      return new StreamObserver<>() {
        @Override
        public void onNext(EnvironmentMessage value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }
  }
}
