package io.dataclay.ds.ee;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.dataclay.client.Channels;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.RelayReply;
import io.dataclay.proto.RelayRequest;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.rpc.TlsSettings;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Makes the unary calls model code asks for through {@code relay} (a method called on an object
 * of another backend, a field read there, an object looked up by ID or alias, an alias given or
 * removed, the backend list), in the session of the call the request names, whose token never
 * leaves this process. Only the calls on data listed here are relayed; everything an account can
 * do beyond that (sessions, accounts, contracts, models, administration, backend-only calls) is
 * refused, so model code can act only as far as its caller's call on data reaches.
 *
 * <p>Calls go out as a user client's would: over channels that trust the cluster CA and present
 * no certificate of this server, so the receiving server sees the caller and nothing more.
 */
public final class CallRelay implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(CallRelay.class.getName());
  private static final long REFRESH_NANOS = 1_000_000_000L;
  private static final String DS = "dataclay.v1.DataService/";
  private static final String LM = "dataclay.v1.LogicModule/";
  /** Relayed methods: true for those of a Data Service, false for the Logic Module's. */
  static final Map<String, Boolean> RELAYED = Map.ofEntries(
      Map.entry(DS + "CallMethod", true), Map.entry(DS + "GetField", true), Map.entry(DS + "SetField", true),
      Map.entry(DS + "GetObjects", true), Map.entry(DS + "MakePersistent", true),
      Map.entry(LM + "GetObjectInfo", false), Map.entry(LM + "GetObjectByAlias", false),
      Map.entry(LM + "NewAlias", false), Map.entry(LM + "DeleteAlias", false), Map.entry(LM + "GetBackends", false));
  /** Requests and answers travel as the bytes the environment and the server wrote. */
  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw Status.INTERNAL.withDescription("reading a relayed answer failed: " + e.getMessage())
            .asRuntimeException();
      }
    }
  };

  private final Supplier<List<BackendInfo>> backends;
  private final String lmHost;
  private final int lmPort;
  private final TlsSettings tls;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final Map<String, MethodDescriptor<byte[], byte[]>> descriptors = new ConcurrentHashMap<>();
  private volatile List<BackendInfo> known;
  private volatile long knownAt;

  /**
   * Relays to the Logic Module at {@code lmHost:lmPort} and to the backends {@code backends}
   * lists (asked again when one is not known), over channels secured as {@code tls} says; its
   * certificate and key, if any, are not presented.
   */
  public CallRelay(Supplier<List<BackendInfo>> backends, String lmHost, int lmPort, TlsSettings tls) {
    this.backends = backends;
    this.lmHost = lmHost;
    this.lmPort = lmPort;
    this.tls = tls.enabled() ? TlsSettings.of(tls.ca(), null, null) : tls;
  }

  /**
   * The reply to {@code request}, made in {@code session} (null when the call it names is not in
   * flight: refused). Never fails: a refusal or a failed call is the reply's status and error.
   */
  CompletableFuture<RelayReply> serve(Session session, RelayRequest request) {
    RelayReply.Builder reply = RelayReply.newBuilder().setRequestId(request.getRequestId());
    ManagedChannel channel;
    MethodDescriptor<byte[], byte[]> method;
    try {
      if (session == null) {
        throw new PermissionDeniedException("relay names call " + request.getCallId()
            + ", which is not in flight on this execution environment's link");
      }
      String name = request.getMethod().startsWith("/") ? request.getMethod().substring(1) : request.getMethod();
      Boolean toBackend = RELAYED.get(name);
      if (toBackend == null) {
        throw new PermissionDeniedException("model code may not call " + request.getMethod() + ": inside a backend "
            + "only calls on data are available (methods, fields, objects, aliases, the backend list)");
      }
      channel = toBackend ? backendChannel(request.getTarget()) : lmChannel(request.getTarget());
      method = descriptors.computeIfAbsent(name, n -> MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(n)
          .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build());
    } catch (DataClayException e) {
      return CompletableFuture.completedFuture(failed(reply, e));
    }
    CompletableFuture<RelayReply> out = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = channel.newCall(method, CallOptions.DEFAULT);
    Metadata headers = new Metadata();
    headers.put(SessionMetadata.SESSION_KEY, session.token());
    headers.put(SessionMetadata.NESTED_KEY, "1");
    call.start(new ClientCall.Listener<>() {
      private byte[] response;

      @Override
      public void onMessage(byte[] message) {
        response = message;
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (status.getCode() == Status.Code.UNAVAILABLE) {
          forget(request.getTarget()); // it may have restarted on another port
        }
        reply.setStatusCode(status.getCode().value());
        if (status.isOk()) {
          reply.setResponse(ByteString.copyFrom(response == null ? new byte[0] : response));
        } else {
          reply.setStatusMessage(status.getDescription() == null ? "" : status.getDescription());
          byte[] detail = trailers.get(GrpcErrors.ERROR_KEY);
          if (detail != null) {
            try {
              reply.setError(ErrorInfo.parseFrom(detail));
            } catch (InvalidProtocolBufferException bad) {
              LOG.warning("an undecodable error detail came back from " + request.getMethod());
            }
          }
        }
        out.complete(reply.build());
      }
    }, headers);
    call.sendMessage(request.getRequest().toByteArray());
    call.halfClose();
    call.request(2);
    return out;
  }

  @Override
  public void close() {
    channels.values().forEach(Channels::close);
    channels.clear();
  }

  private ManagedChannel lmChannel(String target) {
    if (!target.isEmpty()) {
      throw new InvalidArgumentException("relay.target must be empty for a call on the Logic Module");
    }
    return channels.computeIfAbsent("", k -> Channels.forAddress(lmHost, lmPort, tls));
  }

  // A backend by ID or by its registered address: nothing else is reached (no host a process names).
  private ManagedChannel backendChannel(String target) {
    ManagedChannel known = channels.get(target);
    if (known != null) {
      return known;
    }
    if (target.isEmpty()) {
      throw new InvalidArgumentException("relay.target must name the backend to call");
    }
    BackendInfo b = find(target).orElseThrow(() -> new BackendDoesNotExistException(
        "no backend " + target + " is registered"));
    return channels.computeIfAbsent(target, k -> Channels.forAddress(b.getHost(), b.getPort(), tls));
  }

  // The backend list is asked again at most once a second: an environment naming made-up
  // backends must not turn each of its requests into a Logic Module call.
  private Optional<BackendInfo> find(String target) {
    List<BackendInfo> list = known;
    if (list == null || System.nanoTime() - knownAt > REFRESH_NANOS) {
      list = backends.get();
      known = list;
      knownAt = System.nanoTime();
    }
    return list.stream().filter(b -> b.getId().equals(target) || address(b).equals(target)).findFirst();
  }

  private static String address(BackendInfo b) {
    return (b.getHost().contains(":") ? "[" + b.getHost() + "]" : b.getHost()) + ":" + b.getPort();
  }

  /** Forgets the channel of a backend that may have moved (a new port after a restart). */
  void forget(String backendId) {
    ManagedChannel c = channels.remove(backendId);
    if (c != null) {
      Channels.close(c);
    }
  }

  private static RelayReply failed(RelayReply.Builder reply, DataClayException e) {
    ErrorInfo info = GrpcErrors.info(e);
    return reply.setStatusCode(GrpcErrors.statusCode(info.getCode()).value()).setStatusMessage(info.getMessage())
        .setError(info).build();
  }
}
