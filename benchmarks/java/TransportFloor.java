import com.google.protobuf.BytesValue;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufInputStream;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.grpc.netty.shaded.io.netty.handler.codec.LengthFieldPrepender;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The floor under a client's call, by transport: one Java process serving the same echo three ways,
 * on the Netty that the servers' gRPC carries, every answer written from the network thread that read
 * the request (as the Data Service answers a read from its store). Each message is a protobuf
 * {@code BytesValue}, parsed and written again, as a call's request and answer are:
 *
 * <ul>
 *   <li>a gRPC unary method ({@code echo.Echo/Unary}), as every dataClay call is today;
 *   <li>a gRPC bidirectional stream ({@code echo.Echo/Stream}), one message back per message in;
 *   <li>a plain TCP socket carrying frames of a 4-byte big-endian length and the message.
 * </ul>
 *
 * <p>benchmarks/transport_floor.py starts it and times a Python client on each. Prints
 * {@code ports <grpc> <framed>} once listening, and stops when its standard input closes.
 *
 * <p>Usage: java -cp dataservice.jar:. TransportFloor
 */
public final class TransportFloor {
  private static final int MAX_FRAME = 1 << 20;

  private static final MethodDescriptor.Marshaller<BytesValue> MESSAGE =
      ProtoUtils.marshaller(BytesValue.getDefaultInstance());

  private TransportFloor() {}

  public static void main(String[] args) throws Exception {
    Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .directExecutor()
        .addService(echoService())
        .build()
        .start();
    boolean epoll = Epoll.isAvailable();
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(
        Runtime.getRuntime().availableProcessors(), epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    Channel framed = new ServerBootstrap()
        .group(group)
        .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel channel) {
            channel.pipeline().addLast(
                new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4),
                new LengthFieldPrepender(4),
                new FrameEcho());
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0))
        .sync()
        .channel();
    int framedPort = ((InetSocketAddress) framed.localAddress()).getPort();
    System.out.println("ports " + grpc.getPort() + " " + framedPort + (epoll ? " epoll" : " nio"));
    System.out.flush();
    while (System.in.read() >= 0) {
      // runs until the benchmark closes our standard input
    }
    framed.close().sync();
    group.shutdownGracefully().sync();
    grpc.shutdownNow();
  }

  private static MethodDescriptor<BytesValue, BytesValue> method(MethodDescriptor.MethodType type, String name) {
    return MethodDescriptor.<BytesValue, BytesValue>newBuilder()
        .setType(type)
        .setFullMethodName("echo.Echo/" + name)
        .setRequestMarshaller(MESSAGE)
        .setResponseMarshaller(MESSAGE)
        .build();
  }

  private static ServerServiceDefinition echoService() {
    MethodDescriptor<BytesValue, BytesValue> unary = method(MethodDescriptor.MethodType.UNARY, "Unary");
    MethodDescriptor<BytesValue, BytesValue> stream = method(MethodDescriptor.MethodType.BIDI_STREAMING, "Stream");
    return ServerServiceDefinition.builder("echo.Echo")
        .addMethod(unary, ServerCalls.asyncUnaryCall((request, reply) -> {
          reply.onNext(request);
          reply.onCompleted();
        }))
        .addMethod(stream, ServerCalls.asyncBidiStreamingCall(reply -> new StreamObserver<BytesValue>() {
          @Override
          public void onNext(BytesValue message) {
            reply.onNext(message);
          }

          @Override
          public void onError(Throwable t) {
            // the client went away: nothing to answer
          }

          @Override
          public void onCompleted() {
            reply.onCompleted();
          }
        }))
        .build();
  }

  /** Parses each frame's message and writes it back in a frame. */
  private static final class FrameEcho extends SimpleChannelInboundHandler<ByteBuf> {
    @Override
    protected void channelRead0(ChannelHandlerContext context, ByteBuf frame) throws IOException {
      BytesValue message;
      try (ByteBufInputStream in = new ByteBufInputStream(frame)) {
        message = BytesValue.parseFrom(in);
      } catch (InvalidProtocolBufferException e) {
        context.close(); // not a message: the client broke the protocol
        return;
      }
      context.writeAndFlush(Unpooled.wrappedBuffer(message.toByteArray()));
    }
  }
}
