package io.dataclay.ds.servicer;

import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.session.InlineCall;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.LivenessGrpc;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * Picks where each call runs: MakePersistent, CallMethod, GetField and SetField whose session is already cached
 * run inline on the transport thread that received them (saving the hop to the pool), as an
 * {@link InlineCall} carrying that session, so they never call the Logic Module there; every
 * other call runs on the pool, and so does every call while the backend is still installing its
 * models at start (calls wait for that). Never answers null, since the server's default is that thread.
 *
 * <p>It chooses with the sessions {@code sessions} already holds; calls that may block go to {@code
 * pool}, and so do all calls when {@code storeNeverWaits} is false (a store that talks to a
 * database server must not be read or written on a network thread) or {@code models} is not ready.
 */
public record CallExecutors(SessionCache sessions, Executor pool, boolean storeNeverWaits, ClassAvailability models)
    implements ServerCallExecutorSupplier {
  // GetObjects is left out on purpose: its answer may be many MiB read and serialised on the
  // calling thread, which must not happen on an event loop.
  private static final Set<String> INLINE_METHODS = Set.of(
      DataServiceGrpc.getMakePersistentMethod().getFullMethodName(),
      DataServiceGrpc.getCallMethodMethod().getFullMethodName(),
      DataServiceGrpc.getGetFieldMethod().getFullMethodName(),
      DataServiceGrpc.getSetFieldMethod().getFullMethodName());

  @Override
  public <Q, R> Executor getExecutor(ServerCall<Q, R> call, Metadata headers) {
    if (call.getMethodDescriptor().getServiceName().equals(LivenessGrpc.SERVICE_NAME)) {
      return Runnable::run; // a ping answers at once: never behind calls queued on a busy pool
    }
    if (!INLINE_METHODS.contains(call.getMethodDescriptor().getFullMethodName())) {
      return pool;
    }
    Session session = sessions.cached(headers.get(SessionMetadata.SESSION_KEY));
    if (!runsInline(session)) {
      return pool;
    }
    return work -> InlineCall.run(session, work);
  }

  /**
   * Whether a call of one of the inline methods in {@code session} (null: not cached) runs inline
   * on the thread that received it, the rule gRPC's calls and the call port's share.
   */
  public boolean runsInline(Session session) {
    return session != null && storeNeverWaits && models.ready();
  }
}
