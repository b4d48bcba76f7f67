package tour.model;

import io.dataclay.api.DataClayObject;

/** A stored counter: once persistent, increment() runs in the backend that stores it. */
public class Counter extends DataClayObject {
  private int count;

  public int increment() {
    count += 1;
    return count;
  }
}
