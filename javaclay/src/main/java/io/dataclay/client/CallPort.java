package io.dataclay.client;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.proto.CallFrame;
import io.dataclay.proto.CallReply;
import io.dataclay.proto.OpenCalls;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.TlsSettings;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * A Data Service's call port (dataservice.proto: CallPort, CallFrame, CallReply): method calls and
 * field reads and writes as length-prefixed frames on a plain or TLS socket, instead of gRPC calls.
 * Each thread has its own blocking connection per session, opened in that session by its first
 * frame; calls on it go one at a time. A server that goes silent is told from a slow call as gRPC's
 * keepalive tells it: while a call waits the server sends an empty frame every keepalive period,
 * and the call is given up after three periods of silence. A connection that cannot be made is not
 * an error: {@link Unusable} tells the caller to make the call over gRPC.
 */
final class CallPort implements AutoCloseable {
  /** The longest a connection may take to be made and opened, whatever the unreachable time says. */
  static final int OPEN_WAIT_MS = 10_000;
  /** A connection idle this long is checked (for a close or keepalive the server sent) before it is used. */
  static final long IDLE_CHECK_NANOS = 500_000_000L;
  /** The largest reply read: the server caps values well below this. */
  static final int MAX_REPLY_BYTES = Integer.MAX_VALUE - 8;
  /**
   * A frame larger than this is sent in steps of this size, each watched for silence. A smaller one
   * fits the send buffer a Linux socket starts with (nothing else is in it between calls), so its
   * write does not wait for the server.
   */
  static final int WATCHED_WRITE_BYTES = 1 << 16;

  /** The call port could not be reached or refused to open: nothing was sent, make the call over gRPC. */
  static final class Unusable extends Exception {
    Unusable(String why) {
      super(why, null, false, false);
    }
  }

  private final String host;
  private final int port;
  private final SSLContext ssl;
  private final int keepaliveMs;
  private final int silenceMs;
  private final ThreadLocal<Map<String, Connection>> mine = ThreadLocal.withInitial(HashMap::new);
  private final Set<Connection> connections = new HashSet<>();
  private boolean closed;

  /**
   * The call port at {@code host:port}, over TLS trusting the cluster CA when {@code tls} is enabled;
   * a waiting call hears from a live server every {@code unreachableMs / 3} (at least 100 ms) and
   * gives up after {@code unreachableMs} of silence (0: calls wait forever).
   */
  CallPort(String host, int port, TlsSettings tls, long unreachableMs) {
    this.host = host;
    this.port = port;
    this.ssl = tls.enabled() ? context(tls.caCertificates()) : null;
    this.keepaliveMs = unreachableMs <= 0 ? 0 : (int) Math.max(100, Math.min(Integer.MAX_VALUE / 3, unreachableMs / 3));
    this.silenceMs = 3 * keepaliveMs;
  }

  /** The port this connects to. */
  int port() {
    return port;
  }

  /** Connections open now, of every thread. */
  synchronized int connections() {
    return connections.size();
  }

  /**
   * Sends {@code frame} (one call; its ID is set here) in the session {@code token} and returns the
   * reply's value.
   *
   * @throws Unusable when no connection could be made or opened (nothing was sent)
   * @throws DataClayException the call's own error; BACKEND_UNAVAILABLE when the connection broke or
   *     went silent while the call waited (it may have run)
   */
  byte[] call(String token, CallFrame.Builder frame) throws Unusable {
    Connection c = connection(token);
    try {
      return c.call(frame);
    } finally {
      boolean retired;
      synchronized (this) {
        c.busy = false;
        retired = closed;
      }
      // a connection the transport failed is dropped; one whose call merely failed stays
      if (retired || c.closed) {
        drop(c);
      }
    }
  }

  /**
   * Closes the connections of every thread: idle ones now, and one a call is using once that call
   * has its answer, so that no other thread's call fails for it; later calls are {@link Unusable}.
   */
  @Override
  public void close() {
    List<Connection> idle = new ArrayList<>();
    synchronized (this) {
      closed = true;
      for (Connection c : connections) {
        if (!c.busy) {
          idle.add(c);
        }
      }
      connections.removeAll(idle);
    }
    idle.forEach(Connection::close);
  }

  private Connection connection(String token) throws Unusable {
    Map<String, Connection> own = mine.get();
    Connection c = own.get(token);
    if (c != null && c.usable()) {
      synchronized (this) {
        if (!closed) {
          c.busy = true;
          return c;
        }
      }
    }
    if (c != null) {
      drop(c);
    }
    synchronized (this) {
      if (closed) {
        throw new Unusable("the client was closed");
      }
    }
    c = open(token);
    List<Connection> ended = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        c.close();
        throw new Unusable("the client was closed");
      }
      // the connections of threads that ended are closed as new ones open: a program that runs its
      // calls on ever new threads keeps as many connections as it has threads alive
      for (Connection other : connections) {
        if (!other.thread.isAlive()) {
          ended.add(other);
        }
      }
      connections.removeAll(ended);
      connections.add(c);
      c.busy = true;
    }
    ended.forEach(Connection::close);
    own.put(token, c);
    return c;
  }

  private void drop(Connection c) {
    c.close();
    synchronized (this) {
      connections.remove(c);
    }
    Map<String, Connection> own = mine.get();
    if (own.get(c.token) == c) {
      own.remove(c.token);
    }
  }

  // Connects and opens the connection in the session; Unusable when either cannot be done (the
  // server's refusal of the session itself is thrown: gRPC would refuse it as well).
  private Connection open(String token) throws Unusable {
    int wait = silenceMs == 0 ? OPEN_WAIT_MS : Math.min(silenceMs, OPEN_WAIT_MS);
    Socket socket = new Socket();
    Connection c;
    try {
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), wait);
      socket.setSoTimeout(wait);
      Socket s = socket;
      if (ssl != null) {
        SSLSocket tls = (SSLSocket) ssl.getSocketFactory().createSocket(socket, host, port, true);
        SSLParameters p = tls.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host, as for gRPC
        p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
        tls.setSSLParameters(p);
        tls.startHandshake();
        s = tls;
      }
      c = new Connection(s, socket, token);
    } catch (IOException e) {
      closeQuietly(socket);
      throw new Unusable("cannot reach the call port at " + host + ":" + port + ": " + e.getMessage());
    }
    try {
      c.call(CallFrame.newBuilder().setOpen(OpenCalls.newBuilder().setSession(token).setKeepaliveMs(keepaliveMs)));
      c.socket.setSoTimeout(silenceMs);
    } catch (BackendUnavailableException | InternalException e) {
      c.close();
      throw new Unusable("the call port at " + host + ":" + port + " did not open: " + e.getMessage());
    } catch (IOException e) {
      c.close();
      throw new Unusable("the call port at " + host + ":" + port + " did not open: " + e.getMessage());
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** One socket opened in the session {@code token}, used by the thread that opened it. */
  private final class Connection {
    final Socket socket;
    // the TCP socket under TLS (or the socket itself): closing it ends a write that waits
    private final Socket transport;
    final String token;
    final Thread thread = Thread.currentThread();
    private final DataInputStream in;
    private final OutputStream out;
    private long nextId = 1;
    private long lastUsed = System.nanoTime();
    private volatile boolean closed;
    // when a step of the frame being sent was last taken; whether a watched send is under way, and
    // whether it was given up as silent (both guarded by this connection)
    private volatile long progress;
    private boolean sending;
    private boolean stalled;
    // a call of its thread is using it; guarded by the CallPort
    private boolean busy;

    Connection(Socket socket, Socket transport, String token) throws IOException {
      this.socket = socket;
      this.transport = transport;
      this.token = token;
      this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
      this.out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
    }

    /**
     * Whether a call may be sent: open, and not closed by the server while it was idle. A connection
     * idle for a while is read without waiting first: keepalives sent as the last call ended are
     * skipped, and a close is seen here instead of failing the next call, which may then not be
     * retried.
     */
    boolean usable() {
      if (closed) {
        return false;
      }
      if (System.nanoTime() - lastUsed < IDLE_CHECK_NANOS) {
        return true;
      }
      try {
        while (true) {
          if (in.available() == 0) {
            socket.setSoTimeout(1);
            try {
              in.mark(1);
              if (in.read() < 0) {
                return false;
              }
              in.reset();
            } catch (SocketTimeoutException quiet) {
              lastUsed = System.nanoTime();
              return true;
            } finally {
              socket.setSoTimeout(silenceMs);
            }
          }
          CallReply r = read(); // a frame has begun: the rest of it follows at once
          if (r.getId() != 0 || r.hasError()) {
            return false; // nothing is unanswered while idle; an error is the server closing
          }
        }
      } catch (IOException | RuntimeException e) {
        return false;
      }
    }

    byte[] call(CallFrame.Builder frame) {
      long id = nextId++;
      byte[] body = frame.setId(id).build().toByteArray();
      try {
        writeFrame(body);
      } catch (IOException e) {
        if (gaveUpSending()) {
          close();
          throw new BackendUnavailableException("service unavailable: the call port at " + host + ":" + port
              + " took nothing of the call for " + silenceMs / 1000.0 + " s while it was sent (DATACLAY_UNREACHABLE_MS)",
              false);
        }
        DataClayException why = closingError();
        close();
        if (why != null) {
          throw why;
        }
        throw new BackendUnavailableException("the call port at " + host + ":" + port + " closed the connection: "
            + e.getMessage(), false);
      }
      CallReply reply;
      while (true) {
        reply = readOrFail();
        if (reply.getId() == id) {
          break;
        }
        if (reply.hasError()) { // id 0: the server ends the connection, saying why
          close();
          throw GrpcErrors.fromInfo(reply.getError());
        }
        if (reply.getId() != 0) {
          close();
          throw new InternalException("the call port answered call " + reply.getId() + " while call " + id + " waited");
        }
      }
      lastUsed = System.nanoTime();
      if (reply.hasError()) {
        throw GrpcErrors.fromInfo(reply.getError());
      }
      return reply.getValue().toByteArray();
    }

    // The error the server sent before it closed the connection (such as a frame over its size
    // limit, refused while this side was still writing it), if it arrived; null otherwise.
    private DataClayException closingError() {
      try {
        socket.setSoTimeout(100);
        while (true) {
          CallReply r = read();
          if (r.getId() == 0 && r.hasError()) {
            return GrpcErrors.fromInfo(r.getError());
          }
        }
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }

    private void writeFrame(byte[] body) throws IOException {
      out.write(body.length >>> 24);
      out.write(body.length >>> 16);
      out.write(body.length >>> 8);
      out.write(body.length);
      if (body.length <= WATCHED_WRITE_BYTES || silenceMs == 0) {
        out.write(body);
        out.flush();
        return;
      }
      // a socket write has no timeout: a server that stops taking the frame (a partition, a frozen
      // host) is told from a slow one by steps of it taken, and its connection closed after
      // silenceMs without one, as a read gives up
      progress = System.nanoTime();
      synchronized (this) {
        sending = true;
        stalled = false;
      }
      long period = Math.max(10, silenceMs / 4);
      ScheduledFuture<?> watch = Watch.TIMER.scheduleWithFixedDelay(this::closeIfStalled, period, period,
          TimeUnit.MILLISECONDS);
      try {
        for (int at = 0; at < body.length; at += WATCHED_WRITE_BYTES) {
          out.write(body, at, Math.min(WATCHED_WRITE_BYTES, body.length - at));
          progress = System.nanoTime();
        }
        out.flush();
      } finally {
        synchronized (this) {
          sending = false; // a check already running closes nothing once the send has ended
        }
        watch.cancel(false);
      }
    }

    // On the timer: ends a send the server has taken nothing of for silenceMs.
    private synchronized void closeIfStalled() {
      if (sending && System.nanoTime() - progress > TimeUnit.MILLISECONDS.toNanos(silenceMs)) {
        stalled = true;
        closed = true;
        closeQuietly(transport);
      }
    }

    private synchronized boolean gaveUpSending() {
      return stalled;
    }

    private CallReply readOrFail() {
      try {
        return read();
      } catch (SocketTimeoutException e) {
        close();
        throw new BackendUnavailableException("service unavailable: the call port at " + host + ":" + port
            + " went silent for " + silenceMs / 1000.0 + " s (DATACLAY_UNREACHABLE_MS)", false);
      } catch (EOFException e) {
        close();
        throw new BackendUnavailableException("service unavailable: the call port at " + host + ":" + port
            + " closed the connection", false);
      } catch (IOException e) {
        close();
        throw new BackendUnavailableException("service unavailable: the call port's connection to " + host + ":"
            + port + " broke: " + e.getMessage(), false);
      }
    }

    private CallReply read() throws IOException {
      int size = in.readInt();
      if (size < 0 || size > MAX_REPLY_BYTES) {
        close();
        throw new InternalException("the call port sent a frame of " + Integer.toUnsignedString(size) + " bytes");
      }
      // read as it arrives, not allocated from the length first: a broken server's 4 bytes must not
      // cost this process 2 GiB
      byte[] body = in.readNBytes(size);
      if (body.length != size) {
        throw new EOFException();
      }
      try {
        return CallReply.parseFrom(body);
      } catch (IOException e) {
        close();
        throw new InternalException("the call port sent an unreadable reply: " + e.getMessage());
      }
    }

    void close() {
      closed = true;
      closeQuietly(socket);
    }
  }

  /** The timer that watches large sends, one thread for every port, started by the first such send. */
  private static final class Watch {
    static final ScheduledThreadPoolExecutor TIMER = timer();

    private static ScheduledThreadPoolExecutor timer() {
      ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "dataclay-call-port-send-watch");
        t.setDaemon(true);
        return t;
      });
      timer.setRemoveOnCancelPolicy(true); // a send that ended leaves nothing on the timer
      return timer;
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing is all that is left to do
    }
  }

  private static SSLContext context(List<X509Certificate> ca) {
    try {
      KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
      trusted.load(null, null);
      for (int i = 0; i < ca.size(); i++) {
        trusted.setCertificateEntry("dataclay-ca-" + i, ca.get(i));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trusted);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new InternalException("cannot use the cluster CA for the call port: " + e.getMessage());
    }
  }
}
