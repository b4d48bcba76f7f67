package io.dataclay.ds.servicer;

import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.proto.CollectionBarrier;
import io.dataclay.proto.HeldObjects;
import io.dataclay.proto.ObjectReferences;
import io.dataclay.proto.ReferenceBatch;
import io.dataclay.server.Replies;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/** The garbage-collection answers: the reference graph as a flow-controlled stream, and the barrier. */
final class CollectionReplies {
  private CollectionReplies() {}

  /**
   * Streams {@code batches} to the caller as fast as it reads them: each batch is loaded only when
   * the transport can take it (the onReady callback), so a slow Logic Module never makes the
   * whole graph pile up in this process's memory.
   */
  static void stream(StreamObserver<ReferenceBatch> observer, Iterator<List<ReferenceRecorder.Outgoing>> batches) {
    ServerCallStreamObserver<ReferenceBatch> out = (ServerCallStreamObserver<ReferenceBatch>) observer;
    AtomicBoolean finished = new AtomicBoolean();
    out.setOnReadyHandler(() -> {
      if (finished.get()) {
        return;
      }
      try {
        while (out.isReady() && batches.hasNext()) {
          out.onNext(batch(batches.next()));
        }
        if (!batches.hasNext() && finished.compareAndSet(false, true)) {
          out.onCompleted();
        }
      } catch (Throwable t) {
        if (finished.compareAndSet(false, true)) {
          Replies.fail(out, t);
        }
      }
    });
  }

  /** The EndCollection answer. */
  static CollectionBarrier barrier(ReferenceRecorder.Recorded recorded) {
    CollectionBarrier.Builder out = CollectionBarrier.newBuilder();
    recorded.referenced().forEach(id -> out.addReferenced(id.toString()));
    recorded.held().forEach((token, ids) -> {
      HeldObjects.Builder held = HeldObjects.newBuilder().setSessionToken(token);
      ids.forEach(id -> held.addObjectIds(id.toString()));
      out.addHeld(held);
    });
    return out.build();
  }

  private static ReferenceBatch batch(List<ReferenceRecorder.Outgoing> objects) {
    ReferenceBatch.Builder out = ReferenceBatch.newBuilder();
    for (ReferenceRecorder.Outgoing o : objects) {
      ObjectReferences.Builder entry = ObjectReferences.newBuilder().setId(o.id().toString());
      for (UUID r : o.references()) {
        entry.addReferences(r.toString());
      }
      out.addObjects(entry);
    }
    return out.build();
  }
}
