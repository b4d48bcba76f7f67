package wordcount.model;

import io.dataclay.api.DataClayObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Word counts merged from partial results. */
public class TextStats extends DataClayObject {
  private HashMap<String, Integer> counts = new HashMap<>();

  /** Adds a partial result (word -> count) to the totals. */
  public void mergeWordCounts(Map<String, Integer> partial) {
    partial.forEach((word, n) -> counts.merge(word, n, Integer::sum));
  }

  /**
   * Adds another TextStats' totals to these. {@code other.counts} is read where {@code other} is
   * stored, which may be another backend: field access on a persistent object is remote too.
   */
  public void mergeStats(TextStats other) {
    mergeWordCounts(other.counts);
  }

  /** The n most frequent words as "word=count", most frequent first (ties alphabetically). */
  public ArrayList<String> topWords(int n) {
    List<Map.Entry<String, Integer>> entries = new ArrayList<>(counts.entrySet());
    entries.sort((a, b) -> a.getValue().equals(b.getValue()) ? a.getKey().compareTo(b.getKey())
        : Integer.compare(b.getValue(), a.getValue()));
    ArrayList<String> out = new ArrayList<>();
    for (Map.Entry<String, Integer> e : entries.subList(0, Math.min(n, entries.size()))) {
      out.add(e.getKey() + "=" + e.getValue());
    }
    return out;
  }
}
