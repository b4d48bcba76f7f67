package wordcount;

import io.dataclay.api.DataClay;
import io.dataclay.api.DataClayObject;
import io.dataclay.exceptions.AliasDoesNotExistException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import wordcount.model.Text;
import wordcount.model.TextCollection;
import wordcount.model.TextStats;

/**
 * The wordcount application: {@code prepare ALIAS TEXTS BYTES} stores generated texts round-robin
 * over the Java backends and shares their collection under ALIAS; {@code count ALIAS} counts the
 * words of every text where it is stored and prints the top ten.
 */
public final class WordCount {
  private WordCount() {}

  /** Runs a subcommand; exits 2 on a usage error. */
  public static void main(String[] args) {
    if (args.length == 4 && args[0].equals("prepare")) {
      run(() -> prepare(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3])));
    } else if (args.length == 2 && args[0].equals("count")) {
      run(() -> count(args[1]));
    } else {
      System.err.println("usage: WordCount prepare ALIAS TEXTS BYTES | WordCount count ALIAS");
      System.exit(2);
    }
  }

  private static void run(Runnable work) {
    DataClay.init();
    try {
      work.run();
    } finally {
      DataClay.finish();
    }
  }

  static void prepare(String alias, int texts, int bytes) {
    try {
      DataClayObject.deleteAlias(alias);
    } catch (AliasDoesNotExistException absent) {
      System.out.println("creating alias " + alias);
    }
    List<UUID> backends = new ArrayList<>(DataClay.getBackends().keySet());
    Random random = new Random(1);
    TextCollection collection = new TextCollection();
    collection.makePersistent(alias, backends.get(0));
    for (int i = 0; i < texts; i++) {
      Text text = new Text(generate(random, bytes));
      text.makePersistent(backends.get(i % backends.size()));
      collection.addText(text);
    }
    System.out.println("stored " + texts + " texts of " + bytes + " bytes over " + backends.size()
        + " backends under alias " + alias);
  }

  static void count(String alias) {
    long t0 = System.nanoTime();
    TextCollection collection = TextCollection.getByAlias(alias);
    TextStats result = new TextStats();
    result.makePersistent();
    List<Text> texts = collection.getTexts();
    System.out.println("Ready to count words from " + texts.size() + " different texts");
    for (Text text : texts) {
      Map<String, Integer> partial = text.wordCount();
      result.mergeWordCounts(partial);
    }
    System.out.printf("WordCount finished in %.2f s%n", (System.nanoTime() - t0) / 1e9);
    System.out.println("Top 10: " + result.topWords(10));
  }

  private static String generate(Random random, int bytes) {
    StringBuilder out = new StringBuilder(bytes + 16);
    while (out.length() < bytes) {
      // Zipf-like: small word numbers are much more frequent
      int rank = (int) Math.floor(Math.pow(20000, random.nextDouble()));
      out.append('w').append(rank).append(' ');
    }
    return out.toString();
  }
}
