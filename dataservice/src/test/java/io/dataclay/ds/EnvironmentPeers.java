package io.dataclay.ds;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Stands in for the interpreter a Data Service starts its execution environments with
 * (DATACLAY_PYTHON): {@link #python()} is a script that records its command line and environment,
 * then bridges its standard input and output (the link) to a Unix socket this object listens on,
 * exiting when either side ends. Each process the Data Service starts is one accepted
 * {@link EnvironmentPeer}, so a test plays the environment in its place.
 */
public final class EnvironmentPeers implements AutoCloseable {
  // The bridge: its process ID first (for the test only), then bytes both ways until either side ends.
  private static final String BRIDGE = String.join("\n",
      "import os, socket, sys, threading",
      "link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
      "link.connect(sys.argv[1])",
      "link.sendall(b'%d\\n' % os.getpid())",
      "def to_test():",
      "    try:",
      "        while True:",
      "            chunk = os.read(0, 1 << 16)",
      "            if not chunk:",
      "                break",
      "            link.sendall(chunk)",
      "    finally:",
      "        os._exit(0)",
      "threading.Thread(target=to_test, daemon=True).start()",
      "try:",
      "    while True:",
      "        chunk = link.recv(1 << 16)",
      "        if not chunk:",
      "            break",
      "        view = memoryview(chunk)",
      "        while view:",
      "            view = view[os.write(1, view):]",
      "finally:",
      "    os._exit(0)",
      "");

  private final Path dir;
  private final Path records;
  private final Path python;
  private final ServerSocketChannel server;
  private final BlockingQueue<EnvironmentPeer> accepted = new LinkedBlockingQueue<>();
  private final List<EnvironmentPeer> all = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  private EnvironmentPeers(Path dir) throws IOException {
    this.dir = dir;
    this.records = Files.createDirectory(dir.resolve("spawns"));
    Path socket = dir.resolve("ee.sock");
    Path bridge = dir.resolve("bridge.py");
    Files.writeString(bridge, BRIDGE);
    python = dir.resolve("fake-python");
    Files.writeString(python, "#!/bin/sh\n"
        + "printf '%s\\n' \"$@\" > '" + records + "'/$$.args.tmp\n"
        + "env > '" + records + "'/$$.env\n"
        + "mv '" + records + "'/$$.args.tmp '" + records + "'/$$.args\n"
        + "exec '" + systemPython() + "' -I -S '" + bridge + "' '" + socket + "'\n");
    Files.setPosixFilePermissions(python, PosixFilePermissions.fromString("rwx------"));
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    acceptor = new Thread(this::accept, "test-environment-peers");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Listens in a fresh private directory under /tmp (a Unix socket path must stay short). */
  public static EnvironmentPeers listen() throws IOException {
    return new EnvironmentPeers(Files.createTempDirectory(Path.of("/tmp"), "dc-peers-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))));
  }

  /** The stand-in interpreter to give the Data Service as DATACLAY_PYTHON. */
  public Path python() {
    return python;
  }

  /** The next process started (its connection, before any hello), within 10 s. */
  public EnvironmentPeer next() throws InterruptedException {
    return Arrivals.next(accepted, "no execution environment process was started");
  }

  /** The next process started within {@code ms}, or null. */
  public EnvironmentPeer poll(long ms) throws InterruptedException {
    return accepted.poll(ms, TimeUnit.MILLISECONDS);
  }

  /** How many processes were started (each recorded its command line before connecting). */
  public int spawned() {
    try (Stream<Path> files = Files.list(records)) {
      return (int) files.filter(p -> p.toString().endsWith(".args")).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every peer accepted so far. */
  public List<EnvironmentPeer> all() {
    return List.copyOf(all);
  }

  @Override
  public void close() throws Exception {
    server.close();
    acceptor.join(5000);
    for (EnvironmentPeer p : all) {
      p.close();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private void accept() {
    while (true) {
      SocketChannel c;
      try {
        c = server.accept();
      } catch (ClosedChannelException closed) {
        return;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      try {
        EnvironmentPeer p = new EnvironmentPeer(c, records);
        all.add(p);
        accepted.add(p);
      } catch (IOException e) {
        // a process that died before it said who it is: nothing for a test to play
        try {
          c.close();
        } catch (IOException ignored) {
          // already gone
        }
      }
    }
  }

  // An interpreter of this machine for the bridge: the Data Service's PATH may not find one.
  private static String systemPython() {
    for (String d : System.getenv("PATH").split(":")) {
      Path p = Path.of(d, "python3");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return "/usr/bin/python3";
  }
}
