package io.dataclay.ds.callport;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.ServerTransport;
import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.ChannelPipeline;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The call port: CallMethod, GetField and SetField as length-prefixed frames on a TCP connection
 * beside gRPC (dataservice.proto, CallFrame and CallReply), for clients whose per-call cost is
 * mostly gRPC's own (a Python unary call costs 140-170 µs of client CPU here, a frame 20). It
 * listens on the gRPC server's address, with its TLS certificate when the cluster uses TLS; every
 * connection is a {@link CallConnection}, served on this server's event loops.
 */
public final class CallPortServer implements AutoCloseable {
  private final EventLoopGroup loops;
  private final Channel listening;
  private final AtomicInteger unanswered;

  private CallPortServer(EventLoopGroup loops, Channel listening, AtomicInteger unanswered) {
    this.loops = loops;
    this.listening = listening;
    this.unanswered = unanswered;
  }

  /**
   * Listens on {@code bindHost:port} (0: any free port) and serves {@code calls} there.
   *
   * @throws InvalidArgumentException naming {@code bindSetting} when the host does not resolve, or
   *     TLS's certificate and key cannot be used
   * @throws IOException when the port cannot be bound
   */
  public static CallPortServer start(String bindHost, int port, TlsSettings tls, String bindSetting,
      CallPortServices calls) throws IOException {
    InetAddress address = ServerTransport.bindAddress(bindHost, bindSetting);
    SslContext ssl = tls.enabled() ? serverContext(tls) : null;
    boolean epoll = Epoll.isAvailable();
    AtomicInteger unanswered = new AtomicInteger();
    EventLoopGroup loops = new MultiThreadIoEventLoopGroup(Math.max(1, Runtime.getRuntime().availableProcessors()),
        daemons(), epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    try {
      Channel listening = new ServerBootstrap()
          .group(loops)
          .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ChannelPipeline p = ch.pipeline();
              if (ssl != null) {
                p.addLast(ssl.newHandler(ch.alloc()));
              }
              // fail fast: a frame announced larger than the limit closes the connection before
              // any of it is buffered
              p.addLast(new LengthFieldBasedFrameDecoder(calls.maxFrameBytes(), 0, 4, 0, 4, true));
              p.addLast(new CallConnection(calls, unanswered));
            }
          })
          .bind(new InetSocketAddress(address, port))
          .syncUninterruptibly()
          .channel();
      return new CallPortServer(loops, listening, unanswered);
    } catch (RuntimeException e) {
      loops.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw e;
    }
  }

  /** The port bound. */
  public int port() {
    return ((InetSocketAddress) listening.localAddress()).getPort();
  }

  /**
   * Stops listening, waits up to {@code grace} for the calls in flight to be answered (new calls on
   * open connections are still served meanwhile), then closes every connection: the answers of calls
   * still unanswered are lost, and their clients see the connection close.
   */
  public void close(Duration grace) {
    listening.close().syncUninterruptibly();
    long until = System.nanoTime() + grace.toNanos();
    while (unanswered.get() > 0 && System.nanoTime() < until) {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Override
  public void close() {
    close(Duration.ZERO);
  }

  private static SslContext serverContext(TlsSettings tls) {
    try {
      return SslContextBuilder.forServer(tls.cert().stream(), tls.key().stream()).build();
    } catch (IOException | IllegalArgumentException e) {
      throw new InvalidArgumentException("cannot serve TLS on the call port with " + tls + ": " + e.getMessage());
    }
  }

  private static ThreadFactory daemons() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      // /proc shows 15 characters of a name: these stay distinct from the call pool's dataclay-ds-call-N
      Thread t = new Thread(r, "callport-loop-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
