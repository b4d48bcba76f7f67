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

  /** Links another account as backup; returns it. */
  Ledger linkBackup(String owner);

  /** Makes {@code other} (an Account) the backup account. */
  void adopt(Ledger other);

  /** The backup account, or null. */
  Ledger getBackup();

  /** This balance plus {@code other}'s (an Account), read from its field. */
  long combinedBalance(Ledger other);
}
