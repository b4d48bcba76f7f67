package wordcount.model;

import io.dataclay.api.DataClayObject;
import java.util.ArrayList;
import java.util.List;

/** The texts to count, usually shared under an alias. */
public class TextCollection extends DataClayObject {
  private ArrayList<Text> texts = new ArrayList<>();

  /** Appends a text to the collection. */
  public void addText(Text text) {
    texts.add(text);
  }

  /**
   * How many words all the texts hold. Runs in the collection's backend and calls each text's
   * {@link Text#wordCount()} in the backend that stores that text.
   */
  public long totalWords() {
    long total = 0;
    for (Text text : texts) {
      for (int n : text.wordCount().values()) {
        total += n;
      }
    }
    return total;
  }

  /** The texts (references to persistent objects). */
  public List<Text> getTexts() {
    return texts;
  }
}
