package wordcount.model;

import io.dataclay.api.DataClayObject;
import java.util.HashMap;

/** One text; {@link #wordCount()} runs in the backend that stores it. */
public class Text extends DataClayObject {
  private String content;

  /** A text with this content. */
  public Text(String content) {
    this.content = content;
  }

  /** How many times each word occurs in this text. */
  public HashMap<String, Integer> wordCount() {
    HashMap<String, Integer> counts = new HashMap<>();
    for (String word : content.split("\\s+")) {
      if (!word.isEmpty()) {
        counts.merge(word, 1, Integer::sum);
      }
    }
    return counts;
  }
}
