package io.dataclay.ds.ee.java.models;

import io.dataclay.api.DataClayObject;
import java.util.ArrayList;
import java.util.List;

/** A Java model deployed to the Data Service by the Java environment's tests. */
public class Counter extends DataClayObject {
  private int value;
  private String label;
  private Counter next;
  private List<String> log = new ArrayList<>();

  /** A counter at {@code value}. */
  public Counter(String label, int value) {
    this.label = label;
    this.value = value;
  }

  /** Adds n and returns the new value. */
  public int add(int n) {
    value += n;
    log.add("add " + n);
    return value;
  }

  /** Adds a long: an overload of add. */
  public long add(long n) {
    value += (int) n;
    return value;
  }

  /** Throws IllegalStateException with {@code message}, after changing the value. */
  public void fail(String message) {
    value = -1;
    throw new IllegalStateException(message);
  }

  /** Creates a counter, links it as next and returns it. */
  public Counter spawn(String childLabel) {
    next = new Counter(childLabel, 0);
    return next;
  }

  /** Calls add on the next counter (another persistent object). */
  public int addToNext(int n) {
    return next.add(n);
  }

  /** The label. */
  public String getLabel() {
    return label;
  }

  /** Links another counter. */
  public void setNext(Counter next) {
    this.next = next;
  }
}
