package io.dataclay.client;

import io.dataclay.proto.Empty;
import io.dataclay.proto.LivenessGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fails a call whose server has gone silent: once a call has waited a third of {@code
 * unreachableMs} for its answer, the server is pinged (Liveness.Ping) on the same channel with
 * the rest of that time as deadline, and again every third while the call lasts. A server that
 * answers the ping is alive and merely busy, so its call goes on however long it takes; one that
 * does not (its host is cut off, frozen, or gone without a reset) fails the call with UNAVAILABLE
 * within about {@code unreachableMs}, instead of after TCP's minutes. Costs nothing to calls
 * answered within the first third.
 *
 * <p>Only a connected server is judged by pings. While the channel is still connecting, a host
 * that does not answer TCP is given up by the connect timeout ({@link Channels}: the same time),
 * and a connection made but not set up (a server frozen before it answered, or a client process
 * too slow to finish it, such as a JVM just started on a loaded machine) is waited for three times
 * as long. A ping missed while this process itself was stalled (its answer was due, but the
 * process did not run for a while) proves nothing about the server and is sent again, up to that
 * same bound since the server was last heard from.
 */
final class LivenessWatch implements ClientInterceptor {
  private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "dataclay-liveness");
    t.setDaemon(true);
    return t;
  });

  // Loaded with this class, not when the first probe fires: in a JVM that is still starting, loading
  // the ping's code path could take longer than the ping is given.
  private static final MethodDescriptor<Empty, Empty> PING = LivenessGrpc.getPingMethod();

  static {
    ClientCalls.class.getName();
    Futures.class.getName();
    ConnectivityState.class.getName();
  }

  private final String target;
  private final long unreachableMs;
  private final long probeEveryMs;
  private final long pingDeadlineMs;
  private final long longestWaitNanos;
  private final long stallNanos;
  private volatile ManagedChannel watched;

  /** Watches calls to {@code target} ("host:port", for messages); {@code unreachableMs} 0 watches nothing. */
  LivenessWatch(String target, long unreachableMs) {
    this.target = target;
    this.unreachableMs = unreachableMs;
    this.probeEveryMs = Math.max(1, unreachableMs / 3);
    this.pingDeadlineMs = Math.max(1, unreachableMs - probeEveryMs);
    this.longestWaitNanos = TimeUnit.MILLISECONDS.toNanos(3 * unreachableMs);
    this.stallNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, probeEveryMs / 2));
  }

  /** The channel this watch was installed on, whose connectivity state tells connecting from connected. */
  void watching(ManagedChannel channel) {
    this.watched = channel;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    ClientCall<Q, R> call = next.newCall(method, options);
    if (unreachableMs <= 0 || method.getServiceName().equals(LivenessGrpc.SERVICE_NAME)) {
      return call;
    }
    return new Watched<>(call, next);
  }

  private boolean connected() {
    ManagedChannel channel = watched;
    return channel == null || channel.getState(false) == ConnectivityState.READY;
  }

  private final class Watched<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
    private final Channel channel;
    private volatile boolean closed;
    private volatile String silence; // set when this watch failed the call
    private volatile long heardNanos; // the call's start, or the last ping the server answered
    private ScheduledFuture<?> probe;

    Watched(ClientCall<Q, R> call, Channel channel) {
      super(call);
      this.channel = channel;
    }

    @Override
    public void start(Listener<R> listener, Metadata headers) {
      heardNanos = System.nanoTime();
      super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
        @Override
        public void onClose(Status status, Metadata trailers) {
          closed = true;
          cancelProbe();
          String why = silence;
          super.onClose(why == null ? status : Status.UNAVAILABLE.withDescription(why), trailers);
        }
      }, headers);
      schedule();
    }

    private synchronized void schedule() {
      if (!closed) {
        probe = TIMER.schedule(this::probe, probeEveryMs, TimeUnit.MILLISECONDS);
      }
    }

    private synchronized void cancelProbe() {
      if (probe != null) {
        probe.cancel(false);
      }
    }

    private void probe() {
      if (closed) {
        return;
      }
      if (!connected()) {
        if (System.nanoTime() - heardNanos >= longestWaitNanos) {
          fail("no connection to " + target + " set up within " + 3 * unreachableMs + " ms (3 x DATACLAY_UNREACHABLE_MS):"
              + " the server is frozen, or this process too busy to connect");
        } else {
          schedule();
        }
        return;
      }
      long sent = System.nanoTime();
      ClientCall<Empty, Empty> ping = channel.newCall(PING,
          CallOptions.DEFAULT.withDeadlineAfter(pingDeadlineMs, TimeUnit.MILLISECONDS));
      Futures.addCallback(ClientCalls.futureUnaryCall(ping, Empty.getDefaultInstance()), new FutureCallback<>() {
        @Override
        public void onSuccess(Empty answer) {
          heardNanos = System.nanoTime();
          schedule();
        }

        @Override
        public void onFailure(Throwable error) {
          Status status = Status.fromThrowable(error);
          if (status.getCode() == Status.Code.UNIMPLEMENTED) {
            return; // an older server without Liveness: nothing to tell, let the call run
          }
          long now = System.nanoTime();
          boolean stalledHere = now - sent - TimeUnit.MILLISECONDS.toNanos(pingDeadlineMs) > stallNanos;
          if (status.getCode() == Status.Code.DEADLINE_EXCEEDED && stalledHere
              && now - heardNanos < longestWaitNanos) {
            schedule(); // this process ran late itself: the server may have answered in time
            return;
          }
          fail("no answer from " + target + " within " + unreachableMs + " ms (DATACLAY_UNREACHABLE_MS),"
              + " not even to a ping: the server is unreachable, frozen or gone (" + status.getCode() + ")");
        }
      }, MoreExecutors.directExecutor());
    }

    private void fail(String why) {
      silence = why;
      cancel(why, null);
    }
  }
}
