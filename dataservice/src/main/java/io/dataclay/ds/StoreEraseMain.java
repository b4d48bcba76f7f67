package io.dataclay.ds;

import io.dataclay.ds.store.ObjectStores;
import java.nio.file.Path;
import java.util.Map;

/**
 * Erases the stores of this node's stopped backends ({@code dataclay stop --erase} runs it):
 * arguments are {@code <backend name>=<pool directory>}; the engine and the postgres engine's
 * database URL come from the environment ({@link DataServiceConfig#storeToErase}), never from the
 * command line. Prints one line per store. Exit code 0 when every store was erased (or held
 * nothing), 1 when one was refused (the others are still erased), 2 on bad arguments.
 */
public final class StoreEraseMain {
  private StoreEraseMain() {}

  /** Erases the named backends' stores. */
  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    int status = 0;
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0 || eq == arg.length() - 1) {
        System.err.println("erase: argument '" + arg + "' is not <backend name>=<pool directory>");
        System.exit(2);
        return;
      }
      String backend = arg.substring(0, eq);
      Path pool = Path.of(arg.substring(eq + 1));
      try {
        String erased = ObjectStores.erase(DataServiceConfig.storeToErase(env, backend, pool));
        System.out.println(erased == null ? backend + ": nothing stored at " + pool : backend + ": " + erased);
      } catch (RuntimeException e) {
        System.err.println("erase: " + backend + " NOT erased: " + e.getMessage());
        status = 1;
      }
    }
    System.exit(status);
  }
}
