package io.dataclay.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real, throw-away PostgreSQL server for tests: initdb + pg_ctl in a temporary directory,
 * listening on a free port of 127.0.0.1 (fsync off: test data need not survive a power loss).
 * PostgreSQL refuses to run as root, so under root the server runs as user {@code postgres} on
 * directories it owns. Missing binaries fail loudly; nothing is skipped. Always {@link #close()} it.
 */
public final class PostgresServer implements AutoCloseable {
  private static final Path INSTALL_ROOT = Paths.get("/usr/lib/postgresql");
  private static final Pattern DATABASE_NAME = Pattern.compile("[a-z][a-z0-9_]{0,62}");
  private static final long COMMAND_TIMEOUT_SECONDS = 120;

  private final Path bin;
  private final Path root;
  private final Path data;
  private final Path sockets;
  private final boolean asPostgres;
  private int port;
  private boolean running;

  private PostgresServer(Path bin) throws IOException {
    this.bin = bin;
    this.root = Files.createTempDirectory("dataclay-pg-");
    this.data = root.resolve("data");
    this.sockets = root.resolve("sock");
    this.asPostgres = "root".equals(System.getProperty("user.name"));
  }

  /**
   * Initialises a cluster and starts the server; returns once it accepts connections.
   *
   * @throws IllegalStateException when the PostgreSQL server binaries are not installed or it does not start
   */
  public static PostgresServer start() throws IOException, InterruptedException {
    PostgresServer server = new PostgresServer(findBinaries());
    try {
      server.initAndStart();
      return server;
    } catch (IOException | InterruptedException | RuntimeException e) {
      server.close();
      throw e;
    }
  }

  /** The TCP port the server listens on (127.0.0.1). */
  public int port() {
    return port;
  }

  /** The JDBC URL of a database of this server, as user postgres (trust authentication). */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
  }

  /** Creates an empty database ({@code [a-z][a-z0-9_]*}) and returns its JDBC URL. */
  public String createDatabase(String name) throws SQLException {
    if (!DATABASE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("database name must match " + DATABASE_NAME + ": " + name);
    }
    try (Connection c = new org.postgresql.Driver().connect(jdbcUrl("postgres"), new Properties());
         Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return jdbcUrl(name);
  }

  /** Stops the server at once (immediate mode) and deletes its directory; safe to call twice. */
  @Override
  public void close() {
    try {
      if (running) {
        running = false;
        run(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w", "stop");
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      System.err.println("PostgresServer: stopping failed: " + e.getMessage());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    } finally {
      deleteTree(root);
    }
  }

  private void initAndStart() throws IOException, InterruptedException {
    Files.createDirectories(sockets);
    if (asPostgres) {
      giveToPostgres(root);
      giveToPostgres(sockets);
    }
    run(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "postgres", "--auth=trust", "--no-sync",
        "-E", "UTF8");
    String lastFailure = "";
    for (int attempt = 0; attempt < 3; attempt++) {
      port = freePort();
      String options = "-p " + port + " -k " + sockets + " -c listen_addresses=127.0.0.1 -c fsync=off"
          + " -c synchronous_commit=on -c max_connections=200";
      CommandResult result = runAllowingFailure(bin.resolve("pg_ctl").toString(), "-D", data.toString(),
          "-o", options, "-l", root.resolve("server.log").toString(), "-w", "-t", "60", "start");
      if (result.exitCode == 0) {
        running = true;
        return;
      }
      lastFailure = result.output + "\n" + readIfExists(root.resolve("server.log"));
    }
    throw new IllegalStateException("PostgreSQL did not start:\n" + lastFailure);
  }

  private static Path findBinaries() throws IOException {
    if (Files.isDirectory(INSTALL_ROOT)) {
      try (Stream<Path> versions = Files.list(INSTALL_ROOT)) {
        List<Path> found = new ArrayList<>();
        versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb"))).forEach(found::add);
        found.sort(Comparator.comparing((Path p) -> versionOf(p)));
        if (!found.isEmpty()) {
          return found.get(found.size() - 1);
        }
      }
    }
    throw new IllegalStateException("PostgreSQL server binaries not found under " + INSTALL_ROOT
        + "/<version>/bin: install postgresql (scripts/install-deps.sh) to run these tests");
  }

  private static int versionOf(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private void giveToPostgres(Path path) throws IOException {
    UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
    PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
    view.setOwner(users.lookupPrincipalByName("postgres"));
    GroupPrincipal group = users.lookupPrincipalByGroupName("postgres");
    view.setGroup(group);
  }

  private void run(String... command) throws IOException, InterruptedException {
    CommandResult result = runAllowingFailure(command);
    if (result.exitCode != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed (" + result.exitCode + "):\n"
          + result.output);
    }
  }

  private CommandResult runAllowingFailure(String... command) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgres) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(List.of(command));
    Path output = Files.createTempFile("dataclay-pg-cmd-", ".log");
    try {
      Process p = new ProcessBuilder(full).directory(root.toFile()).redirectErrorStream(true)
          .redirectOutput(output.toFile()).start();
      if (!p.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
        throw new IllegalStateException(String.join(" ", full) + " did not finish within "
            + COMMAND_TIMEOUT_SECONDS + " s");
      }
      return new CommandResult(p.exitValue(), readIfExists(output));
    } finally {
      Files.deleteIfExists(output);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String readIfExists(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(unreadable " + file + ": " + e.getMessage() + ")";
    }
  }

  private static void deleteTree(Path top) {
    if (!Files.exists(top)) {
      return;
    }
    try (Stream<Path> all = Files.walk(top)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("PostgresServer: could not delete " + top + ": " + e.getMessage());
    }
  }

  /** Exit code and combined output of a finished command. */
  private record CommandResult(int exitCode, String output) {}
}
