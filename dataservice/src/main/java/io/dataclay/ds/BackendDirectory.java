package io.dataclay.ds;

import io.dataclay.common.PrivatePaths;
import java.nio.file.Path;

/**
 * The backend's directory (backend.id, deployed models, import lists, the clean-stop mark), made or
 * checked at start, before anything in it is read or written: the directory, the cluster home when
 * it is inside it and every directory between them must be this user's alone (mode 0700), and so
 * must everything in it. A Data Service started on its own (by Slurm, on another node) checks this
 * itself rather than trust whoever made the directory.
 */
final class BackendDirectory {
  private BackendDirectory() {}

  /**
   * Makes or checks {@code backendDir} and, when it lies inside {@code home}, the home and the
   * directories between them.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming the path and what to do
   */
  static void claim(Path home, Path backendDir) {
    Path top = home.toAbsolutePath().normalize();
    Path dir = backendDir.toAbsolutePath().normalize();
    if (dir.startsWith(top)) {
      PrivatePaths.directory(top, DataServiceConfig.HOME);
      for (Path p = top; !p.equals(dir); ) {
        p = p.resolve(dir.getName(p.getNameCount()));
        PrivatePaths.directory(p, p.equals(dir) ? "the backend directory" : DataServiceConfig.HOME + "'s "
            + top.relativize(p));
      }
    } else {
      PrivatePaths.directory(dir, "the backend directory (" + DataServiceConfig.BACKEND_DIR + ")");
    }
    PrivatePaths.checkTree(dir, "the backend directory");
  }
}
