import io.dataclay.api.DataClay;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.runtime.ClientConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import wordcount.model.Text;
import wordcount.model.TextStats;

/**
 * Java client latency: an active method on a small persistent object (p50/p99), makePersistent of
 * small objects (p50/p99 and objects/s, after as many unmeasured to warm the JIT), and as the baseline of the same run a bare gRPC round trip to the
 * Logic Module (Health). Usage: JavaLatency [calls] [objects].
 */
public final class JavaLatency {
  public static void main(String[] args) {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
    int objects = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
    DataClay.init();
    try {
      ClientConfig config = ClientConfig.load(null, System.getenv());
      TextStats small = new TextStats();
      small.mergeWordCounts(Map.of("w", 1));
      small.makePersistent();
      try (LogicModuleClient lm = new LogicModuleClient(config.host(), config.port(), () -> null)) {
        for (int i = 0; i < calls / 4; i++) {
          small.topWords(1);
          lm.health(5000);
        }
        long[] method = new long[calls];
        long[] baseline = new long[calls];
        for (int i = 0; i < calls; i++) {
          long t0 = System.nanoTime();
          small.topWords(1);
          long t1 = System.nanoTime();
          lm.health(5000);
          long t2 = System.nanoTime();
          method[i] = t1 - t0;
          baseline[i] = t2 - t1;
        }
        // the same number again first, unmeasured, so that the JIT has compiled the client's path
        List<Text> made = new ArrayList<>(2 * objects);
        for (int i = 0; i < objects; i++) {
          Text t = new Text("warm-up " + i);
          t.makePersistent();
          made.add(t);
        }
        long[] persist = new long[objects];
        long t0 = System.nanoTime();
        for (int i = 0; i < objects; i++) {
          Text t = new Text("hello world " + i);
          long start = System.nanoTime();
          t.makePersistent();
          persist[i] = System.nanoTime() - start;
          made.add(t);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        report("method call (TextStats.topWords)", method);
        report("baseline gRPC round trip (LM Health)", baseline);
        System.out.printf("ratio method p50 / baseline p50: %.2f%n", pct(method, 50) / pct(baseline, 50));
        report("makePersistent (one small object)", persist);
        System.out.printf("makePersistent: %d objects in %.2f s = %.0f objects/s (after as many unmeasured)%n",
            objects, seconds, objects / seconds);
      }
    } finally {
      DataClay.finish();
    }
  }

  private static void report(String what, long[] nanos) {
    System.out.printf("%-40s p50 %.3f ms  p99 %.3f ms  (n=%d)%n", what, pct(nanos, 50) / 1e6, pct(nanos, 99) / 1e6,
        nanos.length);
  }

  private static double pct(long[] nanos, int p) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
  }
}
