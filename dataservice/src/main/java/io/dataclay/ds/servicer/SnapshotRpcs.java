package io.dataclay.ds.servicer;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.replication.ObjectCopy;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.snapshot.ImportStaging;
import io.dataclay.ds.snapshot.SnapshotExports;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.CopiedObject;
import io.dataclay.proto.Empty;
import io.dataclay.proto.Field;
import io.dataclay.proto.FinishImportRequest;
import io.dataclay.proto.FreezeRequest;
import io.dataclay.proto.FreezeResponse;
import io.dataclay.proto.ImportChunk;
import io.dataclay.proto.ImportReceipt;
import io.dataclay.proto.ImportRequest;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.SnapshotChunk;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.proto.StagedObject;
import io.dataclay.proto.StagedObjects;
import io.dataclay.server.DelimitedRecords;
import io.dataclay.server.RecordStreams;
import io.dataclay.server.Replies;
import io.dataclay.server.UploadStream;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The gRPC side of snapshots and imports on a Data Service (the RPCs DataServiceServicer hands
 * over): validates requests, converts records, and streams with flow control in both directions.
 */
public final class SnapshotRpcs {
  /**
   * Objects per staged batch, and its byte bound: one engine transaction and one sync of the staging
   * list each (that sync dominated staging on a busy disk with 8 MiB batches).
   */
  private static final int STAGE_OBJECTS = 10_000;
  private static final long STAGE_BYTES = 64L << 20;

  private final SnapshotExports exports;
  private final ImportStaging staging;
  private final long maxRecordBytes;

  /** The RPCs over {@code exports} and {@code staging}; a record may be up to {@code maxRecordBytes}. */
  public SnapshotRpcs(SnapshotExports exports, ImportStaging staging, long maxRecordBytes) {
    this.exports = exports;
    this.staging = staging;
    this.maxRecordBytes = maxRecordBytes;
  }

  void freezeWrites(FreezeRequest r, StreamObserver<FreezeResponse> out, Supplier<Session> caller) {
    Replies.now(out, () -> {
      SnapshotExports.Sizes sizes = exports.freeze(caller.get(), r.getSnapshotId(), r.getHoldMs(), r.getDataset());
      return FreezeResponse.newBuilder().setObjects(sizes.objects()).setBytes(sizes.bytes()).build();
    });
  }

  void thawWrites(SnapshotRequest r, StreamObserver<Empty> out, Supplier<Session> caller) {
    Replies.done(out, () -> exports.thaw(caller.get(), r.getSnapshotId()));
  }

  void endSnapshot(SnapshotRequest r, StreamObserver<Empty> out, Supplier<Session> caller) {
    Replies.done(out, () -> exports.end(caller.get(), r.getSnapshotId()));
  }

  void exportObjects(SnapshotRequest r, StreamObserver<SnapshotChunk> out, Supplier<Session> caller) {
    Iterator<StoredObject> objects;
    try {
      objects = exports.export(caller.get(), r.getSnapshotId());
    } catch (RuntimeException e) {
      Replies.fail(out, e);
      return;
    }
    // the cut is dropped however the stream ends: completed, failed or cancelled by the client
    RecordStreams.send(out, RecordStreams.chunks(new Iterator<ObjectData>() {
      @Override
      public boolean hasNext() {
        return objects.hasNext();
      }

      @Override
      public ObjectData next() {
        return record(objects.next());
      }
    }), () -> exports.exported(r.getSnapshotId()));
  }

  StreamObserver<ImportChunk> importObjects(StreamObserver<ImportReceipt> out, Supplier<Session> caller) {
    return new ImportStream(out, caller);
  }

  void prepareImport(ImportRequest r, StreamObserver<StagedObjects> out, Supplier<Session> caller) {
    List<List<ObjectCopy>> batches;
    try {
      batches = staging.prepare(caller.get(), r.getImportId());
    } catch (RuntimeException e) {
      Replies.fail(out, e);
      return;
    }
    Iterator<List<ObjectCopy>> it = batches.iterator();
    RecordStreams.send(out, new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public StagedObjects next() {
        StagedObjects.Builder b = StagedObjects.newBuilder();
        for (ObjectCopy c : it.next()) {
          b.addObjects(StagedObject.newBuilder().setId(c.object().id().toString())
              .setHeader(Messages.objectData(c.object()).getHeader()).addAllReplicaBackendIds(c.replicaBackendIds()));
        }
        return b.build();
      }
    }, () -> { });
  }

  void finishImport(FinishImportRequest r, StreamObserver<Empty> out, Supplier<Session> caller) {
    Replies.done(out, () -> staging.finish(caller.get(), r.getImportId(), r.getCommitted()));
  }

  /** The record form of an object; values are wrapped, not copied (stored values are never changed in place). */
  static ObjectData record(StoredObject o) {
    ObjectData.Builder out = Messages.objectData(new StoredObject(o.id(), o.header(), Map.of())).toBuilder();
    for (Map.Entry<String, FieldValue> f : o.fields().entrySet()) {
      Field.Builder fb = Field.newBuilder().setName(f.getKey()).setValue(UnsafeByteOperations.unsafeWrap(f.getValue().value()));
      for (UUID ref : f.getValue().references()) {
        fb.addReferences(ref.toString());
      }
      out.addFields(fb);
    }
    return out.build();
  }

  /** One client stream of ImportObjects: records are staged in batches as they arrive. */
  private final class ImportStream extends UploadStream<ImportChunk, ImportReceipt> {
    private final Supplier<Session> caller;
    private final DelimitedRecords reader = new DelimitedRecords(maxRecordBytes);
    private final List<ObjectCopy> batch = new ArrayList<>();
    private long batchBytes;
    private String importId;

    ImportStream(StreamObserver<ImportReceipt> out, Supplier<Session> caller) {
      super(out); // the client going away aborts the import: by it, by the Logic Module, or by the sweep
      this.caller = caller;
    }

    @Override
    protected void take(ImportChunk chunk) {
      if (importId == null) {
        importId = chunk.getImportId();
        staging.open(caller.get(), importId);
      } else if (!chunk.getImportId().isEmpty() && !chunk.getImportId().equals(importId)) {
        throw new InvalidArgumentException("import_id changed within the stream");
      }
      long first = reader.records();
      List<ByteString> records = reader.feed(chunk.getData());
      for (int i = 0; i < records.size(); i++) {
        add(records.get(i), "record " + (first + i));
      }
    }

    private void add(ByteString bytes, String at) {
      CopiedObject copy;
      try {
        copy = CopiedObject.parseFrom(bytes);
      } catch (InvalidProtocolBufferException e) {
        throw new InvalidArgumentException("data: " + at + " is not a CopiedObject record: " + e.getMessage());
      }
      StoredObject o = Messages.storedObject(copy.getObject(), at + ".object");
      Messages.name(o.header().dataset(), at + ".object.header.dataset");
      Set<String> replicas = new HashSet<>();
      for (int i = 0; i < copy.getReplicaBackendIdsCount(); i++) {
        replicas.add(Messages.uuid(copy.getReplicaBackendIds(i), at + ".replica_backend_ids[" + i + "]").toString());
      }
      batch.add(new ObjectCopy(o, replicas));
      batchBytes += o.valueBytes();
      if (batch.size() >= STAGE_OBJECTS || batchBytes >= STAGE_BYTES) {
        flush(at);
      }
    }

    private void flush(String at) {
      if (!batch.isEmpty()) {
        staging.stage(importId, List.copyOf(batch), "data (up to " + at + ")");
        batch.clear();
        batchBytes = 0;
      }
    }

    @Override
    protected ImportReceipt answer() {
      if (importId == null) {
        throw new InvalidArgumentException("import_id: the stream held no chunk");
      }
      if (!reader.atBoundary()) {
        throw new InvalidArgumentException("data ends inside record " + reader.records());
      }
      flush("the end");
      ImportStaging.Counts c = staging.counts(importId);
      return ImportReceipt.newBuilder().setObjects(c.objects()).setReplicas(c.replicas()).setBytes(c.bytes()).build();
    }
  }
}
