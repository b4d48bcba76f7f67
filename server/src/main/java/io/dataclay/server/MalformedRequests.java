package io.dataclay.server;

import io.dataclay.common.RateLimitedLog;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import java.io.InputStream;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Answers a request that is not a valid protobuf message of its RPC with INVALID_ARGUMENT (and the
 * usual typed detail) and one WARNING line (rate-limited), instead of grpc-java's INTERNAL and a stack trace per
 * request: anyone can send garbage, and the log must stay readable when they do.
 */
public final class MalformedRequests {
  private static final Logger LOG = Logger.getLogger(MalformedRequests.class.getName());
  // anyone who reaches the port can send these: a flood writes a bounded number of lines
  private static final RateLimitedLog WARNINGS = RateLimitedLog.of(LOG);
  // set by the request marshaller when a message does not parse; read by the listener on the same
  // thread, right after (grpc-java parses a request and hands it to onMessage in one go)
  private static final ThreadLocal<String> MALFORMED = new ThreadLocal<>();

  private MalformedRequests() {}

  /** {@code service} with every request parsed defensively. */
  public static ServerServiceDefinition guard(ServerServiceDefinition service) {
    ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
      out.addMethod(guard(m));
    }
    return out.build();
  }

  private static <Q, R> ServerMethodDefinition<Q, R> guard(ServerMethodDefinition<Q, R> m) {
    MethodDescriptor<Q, R> method = m.getMethodDescriptor();
    MethodDescriptor<Q, R> safe = method.toBuilder()
        .setRequestMarshaller(new Tolerant<>(method.getRequestMarshaller())).build();
    return ServerMethodDefinition.create(safe, new Refusing<>(m.getServerCallHandler()));
  }

  /** Parses with the real marshaller; on failure notes why and yields a default instance. */
  private static final class Tolerant<Q> implements MethodDescriptor.Marshaller<Q> {
    private final MethodDescriptor.Marshaller<Q> real;
    private final Q empty;

    Tolerant(MethodDescriptor.Marshaller<Q> real) {
      this.real = real;
      this.empty = real instanceof MethodDescriptor.PrototypeMarshaller<Q> p ? p.getMessagePrototype() : null;
    }

    @Override
    public InputStream stream(Q value) {
      return real.stream(value);
    }

    @Override
    public Q parse(InputStream stream) {
      try {
        return real.parse(stream);
      } catch (RuntimeException e) {
        if (empty == null) {
          throw e;
        }
        MALFORMED.set(rootMessage(e));
        return empty;
      }
    }
  }

  /** Closes a call whose request did not parse, without running the method. */
  private static final class Refusing<Q, R> implements ServerCallHandler<Q, R> {
    private final ServerCallHandler<Q, R> next;

    Refusing(ServerCallHandler<Q, R> next) {
      this.next = next;
    }

    @Override
    public ServerCall.Listener<Q> startCall(ServerCall<Q, R> call, Metadata headers) {
      ServerCall.Listener<Q> delegate = next.startCall(call, headers);
      return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
        private boolean refused;

        @Override
        public void onMessage(Q message) {
          String why = MALFORMED.get();
          if (why == null) {
            super.onMessage(message);
            return;
          }
          MALFORMED.remove();
          refused = true;
          String rpc = call.getMethodDescriptor().getBareMethodName();
          String peer = SessionMetadata.currentPeer();
          WARNINGS.log(Level.WARNING, "malformed request",
              () -> "refused a malformed " + rpc + " request from " + peer + ": " + why);
          var status = GrpcErrors.toStatus(new InvalidArgumentException(
              "the " + rpc + " request is not a valid protobuf message (" + why + ")"));
          call.close(status.getStatus(), status.getTrailers());
        }

        @Override
        public void onHalfClose() {
          if (!refused) {
            super.onHalfClose();
          }
        }
      };
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return m.length() > 160 ? m.substring(0, 160) + "..." : m;
  }
}
