package io.dataclay.ds.ee;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The Unix domain socket the execution environment connects to: {@code ee.sock} in a fresh
 * private directory (mode 0700) under java.io.tmpdir, so only this OS user can reach it. One
 * thread accepts connections and hands each to the consumer; {@link #close} stops accepting and
 * removes the directory.
 */
final class LinkAcceptor implements AutoCloseable {
  /** The longest socket path Linux accepts, in bytes. */
  static final int MAX_SOCKET_PATH_BYTES = 107;
  private static final String SOCKET_NAME = "ee.sock";
  private static final long PAUSE_AFTER_FAILED_ACCEPT_MS = 100;
  private static final Logger LOG = Logger.getLogger(LinkAcceptor.class.getName());

  private final Path directory;
  private final Path socket;
  private final ServerSocketChannel server;
  private final Consumer<SocketChannel> onConnection;
  private final Thread acceptor;

  private LinkAcceptor(Path directory, Path socket, ServerSocketChannel server, Consumer<SocketChannel> onConnection) {
    this.directory = directory;
    this.socket = socket;
    this.server = server;
    this.onConnection = onConnection;
    this.acceptor = new Thread(this::acceptConnections, "dataclay-ds-ee-acceptor");
    acceptor.setDaemon(true);
  }

  /**
   * Binds the socket in a new private directory and starts accepting; every connection goes to
   * {@code onConnection} (on the accepting thread: it must not block).
   *
   * @throws IOException when the directory or socket cannot be made, or the path is too long
   */
  static LinkAcceptor open(Consumer<SocketChannel> onConnection) throws IOException {
    // Crash note: a Data Service killed with SIGKILL leaves this directory (and a dead socket
    // file) behind in java.io.tmpdir; nothing else uses it, and the next start makes a new one.
    Path directory = Files.createTempDirectory("dataclay-ee-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path socket = directory.resolve(SOCKET_NAME);
    try {
      int length = socket.toString().getBytes(StandardCharsets.UTF_8).length;
      if (length > MAX_SOCKET_PATH_BYTES) {
        throw new IOException("the execution environment socket path " + socket + " is " + length
            + " bytes, over the " + MAX_SOCKET_PATH_BYTES + "-byte limit of Unix sockets: set java.io.tmpdir to a"
            + " shorter directory");
      }
      ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      try {
        server.bind(UnixDomainSocketAddress.of(socket));
      } catch (IOException e) {
        server.close();
        throw e;
      }
      LinkAcceptor acceptor = new LinkAcceptor(directory, socket, server, onConnection);
      acceptor.acceptor.start();
      return acceptor;
    } catch (IOException e) {
      removeDirectory(directory, socket);
      throw e;
    }
  }

  /** The socket's path (what the environment gets in DATACLAY_EE_SOCKET). */
  Path socket() {
    return socket;
  }

  /** Stops accepting (connections already handed over stay open) and removes the directory. */
  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      LOG.log(Level.FINE, "closing the execution environment socket failed", e);
    }
    try {
      acceptor.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    removeDirectory(directory, socket);
  }

  private void acceptConnections() {
    while (server.isOpen()) {
      SocketChannel connection;
      try {
        connection = server.accept();
      } catch (ClosedChannelException closed) {
        return;
      } catch (IOException e) {
        if (!server.isOpen()) {
          return;
        }
        // For example out of file descriptors: pause instead of spinning, then try again.
        LOG.warning("accepting an execution environment connection failed: " + e.getMessage());
        pause();
        continue;
      }
      try {
        onConnection.accept(connection);
      } catch (RuntimeException e) {
        LOG.log(Level.SEVERE, "handling an execution environment connection failed", e);
        closeQuietly(connection);
      }
    }
  }

  private static void pause() {
    try {
      Thread.sleep(PAUSE_AFTER_FAILED_ACCEPT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Closes {@code connection}, ignoring failures (the socket is being dropped anyway). */
  static void closeQuietly(SocketChannel connection) {
    try {
      connection.close();
    } catch (IOException ignored) {
      // Closing only fails on an already unusable socket: nothing more to release.
    }
  }

  private static void removeDirectory(Path directory, Path socket) {
    try {
      Files.deleteIfExists(socket);
      Files.deleteIfExists(directory);
    } catch (IOException e) {
      LOG.warning("could not remove the execution environment socket directory " + directory + ": " + e.getMessage());
    }
  }
}
