package io.dataclay.ds.ee.java.models;

/** What the client tests call on an Account, which they load enhanced through another class loader. */
public interface Ledger {
  /** Adds to the balance and returns it. */
  long deposit(long amount);

  /** The balance. */
  long getBalance();

  /** The owner's name. */
  String getOwner();

  /** Refuses to go below zero with IllegalArgumentException. */
  void withdraw(long amount);

  /**
   * Throws the exception {@code kind} names (a JDK type's simple name, "Overdrawn" or "Frozen")
   * with {@code message}.
   */
  void fail(String kind, String message);

  /** Links another account as backup; returns it. */
  Ledger linkBackup(String owner);

  /** Makes {@code other} (an Account) the backup account. */
  void adopt(Ledger other);

  /** The backup account, or null. */
  Ledger getBackup();

  /** This balance plus {@code other}'s (an Account), read from its field. */
  long combinedBalance(Ledger other);
}
