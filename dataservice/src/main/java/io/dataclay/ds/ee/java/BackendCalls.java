package io.dataclay.ds.ee.java;

import io.dataclay.client.DataServiceClient;
import java.util.function.Function;

/** Calls on other backends' Data Services, in the caller's session. */
interface BackendCalls extends AutoCloseable {
  /** {@code rpc} on the client of {@code backendId}. */
  <T> T call(String backendId, Function<DataServiceClient, T> rpc);

  /** Releases the connections. */
  @Override
  void close();
}
