package storage;

import io.dataclay.api.BackendInfo;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * COMPSs names places by host name, dataClay by backend ID: this maps one to the other. A host name
 * names the backends matching it in the first of these tiers that matches any: the backend's ID,
 * its name, its host (case-insensitive; "node1" also matches "node1.example.org"), and last, when
 * both denote this machine (localhost, loopback or local addresses, the kernel's host name), every
 * backend on this machine. No name is looked up in DNS.
 */
final class BackendHosts {
  private static final Pattern IP_LITERAL = Pattern.compile("[0-9.]+|.*:.*");

  private final Collection<BackendInfo> backends;
  private final Predicate<String> local;

  /** The mapping over {@code backends}; {@code local} says whether a host name denotes this machine. */
  BackendHosts(Collection<BackendInfo> backends, Predicate<String> local) {
    this.backends = List.copyOf(backends);
    this.local = local;
  }

  /** The mapping over {@code backends}, with this machine's own names and addresses. */
  static BackendHosts of(Map<UUID, BackendInfo> backends) {
    return new BackendHosts(backends.values(), BackendHosts::isThisMachine);
  }

  /**
   * The backend {@code hostName} names: among the matches, a live one before a dead one, then one
   * {@code preferred} accepts, then the first by name.
   *
   * @throws StorageException when it names no backend
   */
  UUID pick(String hostName, Predicate<UUID> preferred) throws StorageException {
    List<BackendInfo> matches = matching(hostName);
    if (matches.isEmpty()) {
      List<String> known = new ArrayList<>();
      backends.forEach(b -> known.add(b.name() + " (" + b.host() + ", " + b.id() + ")"));
      throw new StorageException("host '" + hostName + "' names no dataClay backend; backends: " + known);
    }
    return matches.stream().min(Comparator.comparing((BackendInfo b) -> !b.alive())
        .thenComparing(b -> !preferred.test(b.id())).thenComparing(BackendInfo::name)
        .thenComparing(BackendInfo::id)).orElseThrow().id();
  }

  /** The host names of {@code locations} (backend IDs), in order, each once; unknown backends are left out. */
  List<String> hostsOf(List<UUID> locations) {
    LinkedHashSet<String> hosts = new LinkedHashSet<>();
    for (UUID id : locations) {
      backends.stream().filter(b -> b.id().equals(id)).findFirst().ifPresent(b -> hosts.add(b.host()));
    }
    return List.copyOf(hosts);
  }

  private List<BackendInfo> matching(String hostName) {
    String h = hostName.strip().toLowerCase(Locale.ROOT);
    List<Predicate<BackendInfo>> tiers = List.of(
        b -> b.id().toString().equals(h),
        b -> b.name().toLowerCase(Locale.ROOT).equals(h),
        b -> sameHost(b.host().toLowerCase(Locale.ROOT), h),
        b -> local.test(h) && local.test(b.host()));
    for (Predicate<BackendInfo> tier : tiers) {
      List<BackendInfo> found = backends.stream().filter(tier).toList();
      if (!found.isEmpty()) {
        return found;
      }
    }
    return List.of();
  }

  // Equal, or one is the other's first label when neither is an address ("node1" and "node1.example.org").
  static boolean sameHost(String a, String b) {
    if (a.equals(b)) {
      return true;
    }
    if (IP_LITERAL.matcher(a).matches() || IP_LITERAL.matcher(b).matches()) {
      return false;
    }
    return a.indexOf('.') < 0 ? b.startsWith(a + ".") : b.indexOf('.') < 0 && a.startsWith(b + ".");
  }

  /** Whether a host name denotes this machine: localhost, a loopback or local address, or this machine's name. */
  static boolean isThisMachine(String hostName) {
    String h = hostName.strip().toLowerCase(Locale.ROOT);
    if (h.equals("localhost") || h.endsWith(".localhost")) {
      return true;
    }
    if (IP_LITERAL.matcher(h).matches()) {
      try {
        InetAddress a = InetAddress.getByName(h); // a literal: parsed, never looked up
        return a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null;
      } catch (UnknownHostException | SocketException e) {
        return false;
      }
    }
    String self = MachineName.VALUE;
    return !self.isEmpty() && sameHost(self, h);
  }

  // The kernel's name for this machine, read once (no resolver call, so nothing can hang on DNS).
  private static final class MachineName {
    static final String VALUE = read();

    private static String read() {
      try {
        return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip().toLowerCase(Locale.ROOT);
      } catch (IOException | RuntimeException e) {
        String env = System.getenv("HOSTNAME");
        return env == null ? "" : env.strip().toLowerCase(Locale.ROOT);
      }
    }
  }
}
