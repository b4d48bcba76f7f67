package fuzzjava;

import io.dataclay.api.DataClayObject;

/** The fuzzer's Java model: its methods make the backend decode arguments of several shapes. */
public class Vault extends DataClayObject {
  private String secret;
  private Object kept;
  private int calls;

  public Vault() {}

  /** The length of a byte array (the known-good call). */
  public int size(byte[] data) {
    calls++;
    return data.length;
  }

  /** Any allowed value, as text. */
  public String describe(Object any) {
    return String.valueOf(any);
  }

  /** Keeps any allowed value in a field (stored, re-encoded). */
  public void keep(Object any) {
    kept = any;
  }

  /** The value kept. */
  public Object kept() {
    return kept;
  }

  /** Sets the secret. */
  public void setSecret(String value) {
    secret = value;
  }

  /** Another vault's secret: a reference to a vault of another dataset must be refused. */
  public String secretOf(Vault other) {
    return other.secret;
  }
}
