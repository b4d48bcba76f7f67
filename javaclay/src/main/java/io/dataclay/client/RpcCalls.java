package io.dataclay.client;

import io.dataclay.rpc.GrpcErrors;
import io.grpc.StatusRuntimeException;
import java.util.function.Supplier;

/** Makes a blocking call and turns a failed status into the matching dataClay exception. */
final class RpcCalls {
  private RpcCalls() {}

  static <T> T call(Supplier<T> rpc) {
    try {
      return rpc.get();
    } catch (StatusRuntimeException e) {
      throw GrpcErrors.fromStatus(e);
    }
  }
}
