package io.dataclay.logic.outgoing;

import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.logic.backends.SnapshotCalls;
import io.dataclay.logic.codec.SnapshotMapping;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.proto.FreezeResponse;
import io.dataclay.proto.StagedObject;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/** Snapshot and import calls to backends over gRPC, on the channels {@link GrpcBackendCalls} keeps. */
final class GrpcSnapshotCalls implements SnapshotCalls {
  private static final long CALL_TIMEOUT_MS = 30_000;
  // a backend reports every object an import staged there: millions take minutes
  private static final long PREPARE_TIMEOUT_MS = 30 * 60_000;

  private final Function<BackendRecord, Channel> channels;
  private final Consumer<String> dropChannel;

  /** Calls over {@code channels}; a backend that cannot be reached has its channel dropped. */
  GrpcSnapshotCalls(Function<BackendRecord, Channel> channels, Consumer<String> dropChannel) {
    this.channels = channels;
    this.dropChannel = dropChannel;
  }

  @Override
  public Frozen freeze(BackendRecord b, String snapshotId, long holdMs, String dataset, String token) {
    FreezeResponse r = call(b, holdMs + CALL_TIMEOUT_MS, token, c -> c.freezeWrites(snapshotId, holdMs, dataset));
    return new Frozen(r.getObjects(), r.getBytes());
  }

  @Override
  public void thaw(BackendRecord b, String snapshotId, String token) {
    call(b, CALL_TIMEOUT_MS, token, c -> {
      c.thawWrites(snapshotId);
      return null;
    });
  }

  @Override
  public void endSnapshot(BackendRecord b, String snapshotId, String token) {
    call(b, CALL_TIMEOUT_MS, token, c -> {
      c.endSnapshot(snapshotId);
      return null;
    });
  }

  @Override
  public void prepareImport(BackendRecord b, String importId, String token,
      Consumer<List<ImportTables.StagedCopy>> sink) {
    call(b, PREPARE_TIMEOUT_MS, token, c -> {
      c.prepareImport(importId, batch -> {
        List<ImportTables.StagedCopy> copies = new ArrayList<>(batch.getObjectsCount());
        for (StagedObject o : batch.getObjectsList()) {
          copies.add(SnapshotMapping.stagedCopy(b, o));
        }
        sink.accept(copies);
      });
      return null;
    });
  }

  @Override
  public void finishImport(BackendRecord b, String importId, boolean committed, String token) {
    call(b, CALL_TIMEOUT_MS, token, c -> {
      c.finishImport(importId, committed);
      return null;
    });
  }

  private <T> T call(BackendRecord b, long timeoutMs, String token, Function<DataServiceClient, T> body) {
    try {
      return body.apply(new DataServiceClient(withDeadline(channels.apply(b), timeoutMs), () -> token));
    } catch (BackendUnavailableException e) {
      dropChannel.accept(b.id());
      throw e;
    }
  }

  private static Channel withDeadline(Channel channel, long ms) {
    return ClientInterceptors.intercept(channel, new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return next.newCall(method, options.withDeadlineAfter(ms, java.util.concurrent.TimeUnit.MILLISECONDS));
      }
    });
  }
}
