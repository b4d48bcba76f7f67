package io.dataclay.ds.ee.java.models;

import io.dataclay.api.DataClayObject;

/** A Java model used through the client API: a plain class whose methods run in the backend once persistent. */
public class Account extends DataClayObject implements Ledger {
  private final String owner;
  private long balance;
  private Account backup;

  /** An account of {@code owner} with a zero balance. */
  public Account(String owner) {
    this.owner = owner;
  }

  @Override
  public long deposit(long amount) {
    balance += amount;
    return balance;
  }

  @Override
  public long getBalance() {
    return balance;
  }

  @Override
  public String getOwner() {
    return owner;
  }

  @Override
  public void withdraw(long amount) {
    if (amount > balance) {
      throw new IllegalArgumentException("balance " + balance + " is less than " + amount);
    }
    balance -= amount;
  }

  @Override
  public void fail(String kind, String message) {
    switch (kind) {
      case "IllegalStateException" -> throw new IllegalStateException(message);
      case "IllegalArgumentException" -> throw new IllegalArgumentException(message);
      case "ArithmeticException" -> throw new ArithmeticException(message);
      case "UnsupportedOperationException" -> throw new UnsupportedOperationException(message);
      case "NoSuchElementException" -> throw new java.util.NoSuchElementException(message);
      case "Overdrawn" -> throw new Overdrawn(message);
      case "Frozen" -> throw new Frozen(Long.parseLong(message));
      default -> throw new AssertionError("unknown kind " + kind);
    }
  }

  @Override
  public Ledger linkBackup(String backupOwner) {
    backup = new Account(backupOwner);
    return backup;
  }

  @Override
  public void adopt(Ledger other) {
    backup = (Account) other;
  }

  @Override
  public Ledger getBackup() {
    return backup;
  }

  @Override
  public long combinedBalance(Ledger other) {
    return balance + ((Account) other).balance; // the other account's field, read where it is stored
  }

  /** The balance of {@code account}, read from its field where this is called. */
  public static long balanceOf(Account account) {
    return account.balance;
  }

  /** Assigns the balance of {@code account} through its field where this is called. */
  public static void setBalanceOf(Account account, long balance) {
    account.balance = balance;
  }
}
