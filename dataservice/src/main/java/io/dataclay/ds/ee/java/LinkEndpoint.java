package io.dataclay.ds.ee.java;

import io.dataclay.ds.ee.FramedStream;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.LoadReply;
import io.dataclay.proto.LoadRequest;
import io.dataclay.proto.RelayReply;
import io.dataclay.proto.RelayRequest;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A confined Java environment's end of its link to the Data Service (standard input and output):
 * sends frames from any thread, and matches the Data Service's answers to loads and relays with
 * the threads waiting for them (the reader hands each answer over as it arrives).
 */
final class LinkEndpoint {
  private final FramedStream stream;
  private final AtomicLong requestIds = new AtomicLong();
  private final Map<Long, CompletableFuture<DataServiceMessage>> waiting = new ConcurrentHashMap<>();
  private volatile boolean ended;

  LinkEndpoint(FramedStream stream) {
    this.stream = stream;
  }

  /** The next frame from the Data Service, or null once it closed the link. */
  DataServiceMessage read() throws IOException {
    return stream.read(DataServiceMessage.parser(), FramedStream.MAX_FRAME_BYTES);
  }

  /** Sends one frame. */
  void send(EnvironmentMessage message) {
    try {
      stream.write(message.toByteArray());
    } catch (IOException e) {
      throw new BackendUnavailableException("the link to the Data Service failed: " + e.getMessage());
    }
  }

  /** The stored state of {@code ids} for call {@code callId}, as the Data Service answers it (blocks). */
  LoadReply load(long callId, List<String> ids) {
    long id = requestIds.incrementAndGet();
    return await(id, EnvironmentMessage.newBuilder().setLoad(LoadRequest.newBuilder().setRequestId(id)
        .setCallId(callId).addAllIds(ids)).build()).getLoaded();
  }

  /** A relayed unary call for call {@code callId} to {@code target} (a backend ID; empty: the Logic Module); blocks. */
  RelayReply relay(long callId, String target, String method, byte[] request) {
    long id = requestIds.incrementAndGet();
    return await(id, EnvironmentMessage.newBuilder().setRelay(RelayRequest.newBuilder().setRequestId(id)
        .setCallId(callId).setTarget(target).setMethod(method)
        .setRequest(com.google.protobuf.ByteString.copyFrom(request))).build()).getRelayed();
  }

  /** Hands an answer (loaded or relayed) to the thread waiting for it; unknown ones are dropped. */
  void answer(long requestId, DataServiceMessage message) {
    CompletableFuture<DataServiceMessage> f = waiting.remove(requestId);
    if (f != null) {
      f.complete(message);
    }
  }

  /** The link ended: every thread waiting for an answer fails. */
  void end() {
    ended = true;
    waiting.values().forEach(f -> f.completeExceptionally(
        new BackendUnavailableException("the link to the Data Service ended")));
    waiting.clear();
  }

  private DataServiceMessage await(long id, EnvironmentMessage request) {
    CompletableFuture<DataServiceMessage> answer = new CompletableFuture<>();
    waiting.put(id, answer);
    if (ended) {
      waiting.remove(id);
      throw new BackendUnavailableException("the link to the Data Service ended");
    }
    send(request);
    try {
      return answer.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while waiting for the Data Service");
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r
          : new BackendUnavailableException("the link to the Data Service failed: " + e.getCause());
    }
  }
}
