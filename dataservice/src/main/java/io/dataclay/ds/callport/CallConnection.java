package io.dataclay.ds.callport;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.ds.servicer.ObjectCalls;
import io.dataclay.ds.session.InlineCall;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.CallFrame;
import io.dataclay.proto.CallReply;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.server.metrics.RpcMetrics;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.handler.codec.DecoderException;
import io.grpc.netty.shaded.io.netty.handler.codec.TooLongFrameException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One connection to the call port. Its first frame opens it in a session (OpenCalls); after that
 * each frame is a call, checked against that session exactly as the same call over gRPC is: the
 * session is looked up in the cache on every call (so a closed or expired session stops working at
 * once) and resolved with the Logic Module off the event loop when it is not cached; a backend's
 * session is refused. Calls run inline on the event loop on the same conditions as gRPC's inline
 * calls, else on the pool, and are answered as they complete, each reply carrying its call's ID.
 * Anything malformed fails the call it belongs to, or, when no call can be named (an unreadable
 * frame, a frame above the limit, a call before the connection is open), ends the connection with
 * an error frame of ID 0. At most {@link #MAX_IN_FLIGHT} calls of a connection are served at once:
 * beyond that the connection is not read until one completes. All state is the event loop's.
 */
final class CallConnection extends ChannelInboundHandlerAdapter {
  /** Unanswered calls a connection may have before the server stops reading it. */
  static final int MAX_IN_FLIGHT = 64;
  /** The shortest keepalive period a client may ask for. */
  static final int MIN_KEEPALIVE_MS = 100;
  /** How long a connection may stay unopened (no OpenCalls answered) before it is closed. */
  static final int OPEN_WAIT_S = 30;
  private static final ByteBuf KEEPALIVE = Unpooled.unreleasableBuffer(frame(CallReply.getDefaultInstance()));

  private final CallPortServices services;
  private final AtomicInteger unanswered;
  private String token;
  private boolean opening;
  private boolean ended;
  private int inFlight;
  private ScheduledFuture<?> keepalive;

  /** A connection served with {@code services}, counting its calls in flight in {@code unanswered} too. */
  CallConnection(CallPortServices services, AtomicInteger unanswered) {
    this.services = services;
    this.unanswered = unanswered;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    // a connection that never opens in a session holds a socket for nothing: it gets this long
    ctx.executor().schedule(() -> {
      if (token == null && !opening) {
        ctx.close();
      }
    }, OPEN_WAIT_S, TimeUnit.SECONDS);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf bytes = (ByteBuf) msg;
    if (ended) {
      bytes.release(); // frames that arrived with the one that ended the connection: none is served
      return;
    }
    CallFrame frame;
    try {
      frame = CallFrame.parseFrom(bytes.nioBuffer());
    } catch (InvalidProtocolBufferException e) {
      end(ctx, 0, new InvalidArgumentException("a frame on the call port is not a CallFrame: " + e.getMessage()));
      return;
    } finally {
      bytes.release();
    }
    long id = frame.getId();
    if (token == null) {
      if (opening || frame.getCallCase() != CallFrame.CallCase.OPEN) {
        end(ctx, id, new InvalidArgumentException("the first frame on the call port opens it (OpenCalls), and"
            + " nothing may follow it until its answer"));
      } else {
        open(ctx, frame);
      }
      return;
    }
    if (id == 0) {
      end(ctx, 0, new InvalidArgumentException("a call's id is never 0"));
      return;
    }
    MethodDescriptor<?, ?> method = switch (frame.getCallCase()) {
      case CALL_METHOD -> DataServiceGrpc.getCallMethodMethod();
      case GET_FIELD -> DataServiceGrpc.getGetFieldMethod();
      case SET_FIELD -> DataServiceGrpc.getSetFieldMethod();
      case OPEN -> null;
      case CALL_NOT_SET -> null;
    };
    if (method == null) {
      reply(ctx, id, null, frame.getCallCase() == CallFrame.CallCase.OPEN
          ? new InvalidArgumentException("call " + id + ": the connection is already open")
          : new InvalidArgumentException("call " + id + " names no call (call_method, get_field or set_field)"),
          null);
      return;
    }
    call(ctx, frame, services.metrics().started(method));
  }

  private void open(ChannelHandlerContext ctx, CallFrame frame) {
    long id = frame.getId();
    int keepaliveMs = frame.getOpen().getKeepaliveMs();
    if (id == 0 || keepaliveMs < 0 || (keepaliveMs != 0 && keepaliveMs < MIN_KEEPALIVE_MS)) {
      end(ctx, id, new InvalidArgumentException("OpenCalls needs a non-zero id and a keepalive_ms of 0 or at least "
          + MIN_KEEPALIVE_MS + ", not id " + id + " and " + Integer.toUnsignedString(keepaliveMs)));
      return;
    }
    String offered = frame.getOpen().getSession();
    Session cached = services.calls().sessions().cached(offered);
    if (cached != null) {
      opened(ctx, id, offered, cached, keepaliveMs);
      return;
    }
    // the Logic Module is asked off the event loop; nothing more is read until it answered
    opening = true;
    ctx.channel().config().setAutoRead(false);
    String peer = peer(ctx);
    services.calls().pool().execute(() -> {
      Session session;
      try {
        session = services.calls().sessions().resolve(offered, peer);
      } catch (RuntimeException e) {
        ctx.executor().execute(() -> end(ctx, id, e));
        return;
      }
      ctx.executor().execute(() -> {
        opening = false;
        opened(ctx, id, offered, session, keepaliveMs);
        if (!ended) {
          ctx.channel().config().setAutoRead(true);
        }
      });
    });
  }

  private void opened(ChannelHandlerContext ctx, long id, String offered, Session session, int keepaliveMs) {
    if (session.backend()) {
      end(ctx, id, new PermissionDeniedException("the call port serves users' sessions; backends call over gRPC"));
      return;
    }
    token = offered;
    if (keepaliveMs > 0) {
      keepalive = ctx.executor().scheduleAtFixedRate(() -> {
        if (inFlight > 0) {
          ctx.writeAndFlush(KEEPALIVE.duplicate());
        }
      }, keepaliveMs, keepaliveMs, TimeUnit.MILLISECONDS);
    }
    reply(ctx, id, new byte[0], null, null);
  }

  private void call(ChannelHandlerContext ctx, CallFrame frame, RpcMetrics.Ending ending) {
    unanswered.incrementAndGet();
    if (++inFlight >= MAX_IN_FLIGHT) {
      ctx.channel().config().setAutoRead(false);
    }
    Session session = services.calls().sessions().cached(token);
    if (services.calls().runsInline(session)) {
      InlineCall.run(session, () -> start(ctx, frame, session, ending));
      return;
    }
    String peer = peer(ctx);
    services.calls().pool().execute(() -> {
      Session resolved;
      try {
        resolved = session != null ? session : services.calls().sessions().resolve(token, peer);
      } catch (RuntimeException e) {
        reply(ctx, frame.getId(), null, e, ending);
        return;
      }
      start(ctx, frame, resolved, ending);
    });
  }

  private void start(ChannelHandlerContext ctx, CallFrame frame, Session session, RpcMetrics.Ending ending) {
    CompletableFuture<byte[]> result;
    try {
      result = switch (frame.getCallCase()) {
        case CALL_METHOD -> ObjectCalls.callMethod(services.execution(), session, frame.getCallMethod(), false);
        case GET_FIELD -> ObjectCalls.getField(services.execution(), session, frame.getGetField(), false);
        case SET_FIELD -> ObjectCalls.setField(services.execution(), session, frame.getSetField(), false);
        default -> throw new IllegalStateException("not a call: " + frame.getCallCase());
      };
    } catch (Throwable t) {
      reply(ctx, frame.getId(), null, t, ending);
      return;
    }
    long id = frame.getId();
    result.whenComplete((value, error) -> reply(ctx, id, value, error, ending));
  }

  /** Answers call {@code id} with {@code value}, or {@code error} when it is not null; from any thread. */
  private void reply(ChannelHandlerContext ctx, long id, byte[] value, Throwable error, RpcMetrics.Ending ending) {
    CallReply.Builder reply = CallReply.newBuilder().setId(id);
    Status.Code code = Status.Code.OK;
    if (error == null) {
      reply.setValue(UnsafeByteOperations.unsafeWrap(value == null ? new byte[0] : value));
    } else {
      ErrorInfo info = GrpcErrors.info(unwrapped(error));
      reply.setError(info);
      code = GrpcErrors.toStatus(info).getStatus().getCode();
    }
    if (ending != null) {
      ending.ended(code);
    }
    ByteBuf out = frame(reply.build());
    if (ctx.executor().inEventLoop()) {
      answered(ctx, out, ending != null);
    } else {
      ctx.executor().execute(() -> answered(ctx, out, ending != null));
    }
  }

  private void answered(ChannelHandlerContext ctx, ByteBuf out, boolean wasCall) {
    ctx.writeAndFlush(out);
    if (wasCall) {
      unanswered.decrementAndGet();
      if (inFlight-- == MAX_IN_FLIGHT && !ended) {
        ctx.channel().config().setAutoRead(true);
      }
    }
  }

  /** Sends {@code error} as call {@code id}'s answer (0: the connection's) and closes the connection. */
  private void end(ChannelHandlerContext ctx, long id, Throwable error) {
    if (ended) {
      return;
    }
    ended = true;
    ctx.channel().config().setAutoRead(false);
    ErrorInfo info = GrpcErrors.info(unwrapped(error));
    ctx.writeAndFlush(frame(CallReply.newBuilder().setId(id).setError(info).build()))
        .addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof TooLongFrameException || cause instanceof DecoderException
        && cause.getCause() instanceof TooLongFrameException) {
      end(ctx, 0, new InvalidArgumentException("a frame on the call port is larger than this backend accepts"
          + " (DATACLAY_MAX_MESSAGE_SIZE, " + services.maxFrameBytes() + " bytes)"));
      return;
    }
    // a reset connection, a failed TLS handshake: nobody is left to answer
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (keepalive != null) {
      keepalive.cancel(false);
    }
    ctx.fireChannelInactive();
  }

  private static Throwable unwrapped(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static String peer(ChannelHandlerContext ctx) {
    SocketAddress address = ctx.channel().remoteAddress();
    if (address instanceof InetSocketAddress inet && inet.getAddress() != null) {
      return inet.getAddress().getHostAddress();
    }
    return "unknown";
  }

  /** {@code reply} behind its 4-byte big-endian length, serialised once into one buffer. */
  private static ByteBuf frame(CallReply reply) {
    int size = reply.getSerializedSize();
    ByteBuf out = Unpooled.buffer(4 + size);
    out.writeInt(size);
    try {
      reply.writeTo(CodedOutputStream.newInstance(out.array(), out.arrayOffset() + 4, size));
    } catch (IOException e) {
      throw new IllegalStateException("a reply did not fit the size it announced", e);
    }
    out.writerIndex(4 + size);
    return out;
  }
}
