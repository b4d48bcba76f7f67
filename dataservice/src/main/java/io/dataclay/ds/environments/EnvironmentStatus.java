package io.dataclay.ds.environments;

import io.dataclay.common.Language;
import java.util.List;

/**
 * An execution environment's state, for GetStatus.
 *
 * @param alive it can run calls now (in-process, or its processes start)
 * @param pid the Data Service's process ID when in-process, else 0 (see {@code processes})
 * @param restarts how many times its processes were restarted since the Data Service started
 * @param calls requests sent to it since the Data Service started
 * @param confinement "in-process", or the confinement mode of its processes
 * @param processes its confined processes, one per account served
 * @param problem why the last process could not start (empty when it could)
 */
public record EnvironmentStatus(Language language, boolean alive, long pid, int restarts, long calls,
    String confinement, List<Process> processes, String problem) {
  /** Copies the list. */
  public EnvironmentStatus {
    processes = List.copyOf(processes);
  }

  /** One confined process, serving {@code account}; {@code confinement} is what its hello said it applied. */
  public record Process(String account, long pid, boolean alive, int restarts, long calls, int inFlight,
      String confinement) {}
}
