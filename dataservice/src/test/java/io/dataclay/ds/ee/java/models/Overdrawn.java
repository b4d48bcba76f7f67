package io.dataclay.ds.ee.java.models;

/** A model's own exception with a (String) constructor: clients rebuild it. */
public class Overdrawn extends RuntimeException {
  /** An overdraft described by {@code message}. */
  public Overdrawn(String message) {
    super(message);
  }
}
