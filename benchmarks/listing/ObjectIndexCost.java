import io.dataclay.common.Language;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.MetadataSync;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;

/**
 * What an index on the objects table costs a registration, and what it buys a page of ListObjects:
 * one SQLite metadata store per variant, filled in alternating rounds (same JVM, same moment), each
 * round 200 groups of 10 objects of 4 classes in one dataset. Prints, per variant, the median and p90
 * per object of rounds 10-39, then the median time of a page of 1,000 objects of one class and of
 * every class. Run: java -cp pyclay/dataclay/_internal/jars/logicmodule.jar benchmarks/listing/ObjectIndexCost.java
 */
public final class ObjectIndexCost {
  private static final String[] VARIANTS = {"none", "objects(dataset, class_name, id)", "objects(dataset, class_name)",
      "objects(dataset)"};

  public static void main(String[] args) throws Exception {
    Path dir = Files.createTempDirectory("index-cost-");
    String backend = UUID.randomUUID().toString();
    MetadataStore[] stores = new MetadataStore[VARIANTS.length];
    for (int k = 0; k < VARIANTS.length; k++) {
      String url = "jdbc:sqlite:" + dir.resolve("db" + k).resolve("m.db");
      stores[k] = MetadataStore.open(url, MetadataSync.NORMAL);
      stores[k].accounts().create(new AccountRecord("alice", "h", "s", 1, false));
      stores[k].backends().upsert(new BackendRecord(backend, "b", "127.0.0.1", 1, List.of(Language.PYTHON), "kv"));
      try (Connection c = new org.sqlite.JDBC().connect(url, new Properties()); Statement s = c.createStatement()) {
        s.execute("DROP INDEX IF EXISTS objects_by_dataset_class");
        if (k > 0) {
          s.execute("CREATE INDEX bench_index ON " + VARIANTS[k]);
        }
      }
    }
    String[] classes = {"app.A", "app.B", "app.C", "app.D"};
    List<List<Double>> us = new ArrayList<>();
    for (int k = 0; k < VARIANTS.length; k++) {
      us.add(new ArrayList<>());
    }
    for (int round = 0; round < 40; round++) {
      for (int k = 0; k < VARIANTS.length; k++) {
        List<ObjectGroup> groups = new ArrayList<>();
        for (int g = 0; g < 200; g++) {
          List<ObjectRecord> objects = new ArrayList<>();
          for (int i = 0; i < 10; i++) {
            objects.add(new ObjectRecord(UUID.randomUUID().toString(), classes[i % 4], Language.PYTHON, "alice",
                backend, List.of(), List.of(), ""));
          }
          groups.add(new ObjectGroup(objects, null, null));
        }
        long t = System.nanoTime();
        stores[k].objects().register(groups);
        us.get(k).add((System.nanoTime() - t) / 1000.0 / 2000);
      }
    }
    for (int k = 0; k < VARIANTS.length; k++) {
      List<Double> xs = new ArrayList<>(us.get(k).subList(10, 40));
      xs.sort(null);
      System.out.printf("%-34s register: median %.2f us/object, p90 %.2f (%d rows)%n", VARIANTS[k], xs.get(15),
          xs.get(27), stores[k].objects().countObjects());
      for (String cls : new String[] {"app.A", null}) {
        List<Double> ms = new ArrayList<>();
        String after = "";
        for (int i = 0; i < 19; i++) {
          long t = System.nanoTime();
          List<ObjectRecord> page = stores[k].listings().objects("alice", cls, cls == null ? "" : cls, after, 1001);
          ms.add((System.nanoTime() - t) / 1e6);
          after = page.get(999).id();
        }
        ms.sort(null);
        System.out.printf("%-34s page of 1,000 of %s: median %.1f ms%n", "", cls == null ? "every class" : cls,
            ms.get(9));
      }
      stores[k].close();
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
