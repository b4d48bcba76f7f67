package io.dataclay.ds.ee.java.models;

/** A model's own exception without a (String) constructor: clients cannot rebuild it. */
public class Frozen extends RuntimeException {
  /** The account is frozen since {@code since} (epoch seconds). */
  public Frozen(long since) {
    super("frozen since " + since);
  }
}
