package io.dataclay.enhance;

import io.dataclay.api.DataClayObject;

/** A model class for the enhancement tests: one field of each kind the enhancement tells apart. */
public class FieldSample extends DataClayObject {
  static int instances;
  private final String name;
  private long total;
  private transient long scratch;

  /** A sample called {@code name}. */
  public FieldSample(String name) {
    this.name = name;
    instances++;
  }

  /** Adds {@code other}'s total to this one's (a field of another instance). */
  public long absorb(FieldSample other) {
    total += other.total;
    scratch = total;
    return total;
  }

  /** Adds to the total. */
  public void add(long n) {
    total += n;
  }

  /** The name. */
  public String getName() {
    return name;
  }
}
