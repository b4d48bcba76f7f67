import io.dataclay.api.DataClay;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.runtime.ClientConfig;
import java.util.Arrays;
import java.util.Map;
import wordcount.model.Text;
import wordcount.model.TextStats;

/**
 * Java client latency, in rounds on one fresh cluster: an active method on a small persistent
 * object (p50/p99), a method that changes it (an update, durable when it returns), a read of one of its fields (the enhanced class's generated reader, which a
 * proxy serves with GetField in the backend), as the baseline of the same round a bare gRPC round
 * trip to the Logic Module (Health; the three interleaved call by call), and makePersistent of
 * small objects one by one (p50/p99 and objects/s). The first round starts on freshly started servers; the JVMs (the client's and the
 * servers') compile their paths during the first rounds, so the last round is the steady state
 * of a long-running service. Usage: JavaLatency [calls] [objects] [rounds].
 */
public final class JavaLatency {
  private static final Map<String, Integer> ONE = Map.of("w", 1);

  public static void main(String[] args) {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 10000;
    int objects = args.length > 1 ? Integer.parseInt(args[1]) : 4000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    DataClay.init();
    try {
      ClientConfig config = ClientConfig.load(null, System.getenv());
      TextStats small = new TextStats();
      small.mergeWordCounts(Map.of("w", 1));
      small.makePersistent();
      if (!Map.of("w", 1).equals(small.$dc$get$counts())) {
        throw new IllegalStateException("the field read returned " + small.$dc$get$counts());
      }
      try (LogicModuleClient lm = new LogicModuleClient(config.host(), config.port(), config.tls(), () -> null)) {
        for (int round = 1; round <= rounds; round++) {
          System.out.printf("round %d of %d%s%n", round, rounds, round == 1 ? " (servers just started)" : "");
          long[] method = new long[calls];
          long[] update = new long[calls];
          long[] field = new long[calls];
          long[] baseline = new long[calls];
          for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            small.topWords(1);
            long t1 = System.nanoTime();
            small.$dc$get$counts();
            long t2 = System.nanoTime();
            lm.health(5000);
            long t3 = System.nanoTime();
            small.mergeWordCounts(ONE);
            long t4 = System.nanoTime();
            method[i] = t1 - t0;
            field[i] = t2 - t1;
            baseline[i] = t3 - t2;
            update[i] = t4 - t3;
          }
          long[] persist = new long[objects];
          long t0 = System.nanoTime();
          for (int i = 0; i < objects; i++) {
            Text t = new Text("hello world " + round + " " + i);
            long start = System.nanoTime();
            t.makePersistent();
            persist[i] = System.nanoTime() - start;
          }
          double seconds = (System.nanoTime() - t0) / 1e9;
          report("  method call (TextStats.topWords)", method);
          report("  update (TextStats.mergeWordCounts)", update);
          report("  field read (TextStats.counts, GetField)", field);
          report("  baseline gRPC round trip (LM Health)", baseline);
          System.out.printf("  ratio method / baseline: p50 %.2f  p99 %.2f%n", pct(method, 50) / pct(baseline, 50),
              pct(method, 99) / pct(baseline, 99));
          System.out.printf("  ratio update / baseline: p50 %.2f  p99 %.2f%n", pct(update, 50) / pct(baseline, 50),
              pct(update, 99) / pct(baseline, 99));
          System.out.printf("  ratio field read / baseline: p50 %.2f  p99 %.2f%n", pct(field, 50) / pct(baseline, 50),
              pct(field, 99) / pct(baseline, 99));
          report("  makePersistent (one small object)", persist);
          System.out.printf("  makePersistent one by one: %d objects in %.2f s = %.0f objects/s%n",
              objects, seconds, objects / seconds);
        }
      }
      Object counted = small.$dc$get$counts().get("w");
      if (!Integer.valueOf(1 + rounds * calls).equals(counted)) {
        throw new IllegalStateException("the updates counted " + counted + ", not " + (1 + rounds * calls));
      }
    } finally {
      DataClay.finish();
    }
  }

  private static void report(String what, long[] nanos) {
    System.out.printf("%-42s p50 %.3f ms  p99 %.3f ms  (n=%d)%n", what, pct(nanos, 50) / 1e6, pct(nanos, 99) / 1e6,
        nanos.length);
  }

  private static double pct(long[] nanos, int p) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
  }
}
