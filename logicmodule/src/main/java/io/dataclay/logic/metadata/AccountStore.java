package io.dataclay.logic.metadata;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/** Accounts, the datasets they own, and the data contracts that grant others access. */
public final class AccountStore {
  private final Jdbc jdbc;

  AccountStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /**
   * Creates the account and the dataset named after it, owned by it, in one transaction.
   *
   * @return false (and nothing changed) when an account of that name already exists
   * @throws InvalidArgumentException when another account already owns a dataset of that name
   */
  public boolean create(AccountRecord a) {
    return jdbc.transaction(c -> create(c, a));
  }

  /** {@link #create(AccountRecord)} inside the caller's transaction. */
  static boolean create(SqlConnection c, AccountRecord a) throws SQLException {
    int inserted = c.update("INSERT INTO accounts (username, password_hash, password_salt,"
            + " password_iterations, admin, may_register_models) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        a.username(), a.passwordHash(), a.passwordSalt(), a.passwordIterations(), a.admin(), a.mayRegisterModels());
    if (inserted == 0) {
      return false;
    }
    c.update("INSERT INTO datasets (name, owner) VALUES (?, ?) ON CONFLICT DO NOTHING",
        a.username(), a.username());
    String owner = ownerOf(c, a.username()).orElseThrow();
    if (!owner.equals(a.username())) {
      // thrown inside the transaction: the account insert above is rolled back with it
      throw new InvalidArgumentException("username: '" + a.username()
          + "' is already the name of a dataset owned by '" + owner + "'");
    }
    return true;
  }

  /** The account of that name, if any. */
  public Optional<AccountRecord> find(String username) {
    return jdbc.transaction(c -> c.queryOne("SELECT username, password_hash, password_salt,"
            + " password_iterations, admin, may_register_models FROM accounts WHERE username = ?",
        rs -> new AccountRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5),
            rs.getBoolean(6)),
        username));
  }

  /**
   * Gives or takes back an account's right to register models; in the same transaction, its
   * models get a new revision (whether they are withdrawn follows that right).
   *
   * @return false when there is no such account
   */
  public boolean setModelRegistration(String username, boolean allowed) {
    return jdbc.transaction(c -> {
      if (c.update("UPDATE accounts SET may_register_models = ? WHERE username = ?", allowed, username) == 0) {
        return false;
      }
      ModelStore.touchOwnedBy(c, username);
      return true;
    });
  }

  /** The owner of a dataset, if it exists. */
  public Optional<String> datasetOwner(String dataset) {
    return jdbc.transaction(c -> ownerOf(c, dataset));
  }

  /** Every dataset the account owns, sorted by name. */
  public List<String> ownedDatasets(String username) {
    return jdbc.transaction(c -> c.query("SELECT name FROM datasets WHERE owner = ? ORDER BY 1",
        rs -> rs.getString(1), username));
  }

  /** Every contract whose beneficiary is the account (in force or not), by dataset. */
  public List<ContractRecord> contractsTo(String beneficiary) {
    return jdbc.transaction(c -> c.query(CONTRACTS + " WHERE k.beneficiary = ? ORDER BY k.dataset",
        AccountStore::contract, beneficiary));
  }

  /** Every contract on a dataset the account owns, by dataset and beneficiary. */
  public List<ContractRecord> contractsOn(String owner) {
    return jdbc.transaction(c -> c.query(CONTRACTS + " WHERE d.owner = ? ORDER BY k.dataset, k.beneficiary",
        AccountStore::contract, owner));
  }

  private static final String CONTRACTS = "SELECT k.dataset, d.owner, k.beneficiary, k.read_only, k.begins_at_ms,"
      + " k.expires_at_ms FROM contracts k JOIN datasets d ON d.name = k.dataset";

  private static ContractRecord contract(java.sql.ResultSet rs) throws SQLException {
    return new ContractRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBoolean(4), rs.getLong(5),
        rs.getLong(6));
  }

  /**
   * Grants {@code contract.beneficiary()} access to {@code contract.dataset()} on the contract's
   * terms, first creating the dataset owned by {@code contract.owner()} when it does not exist;
   * granting again replaces the earlier terms.
   *
   * @throws PermissionDeniedException when the dataset exists and the contract's owner does not own it
   */
  public void grant(ContractRecord contract) {
    jdbc.transaction(c -> {
      grant(c, contract);
      return null;
    });
  }

  /** {@link #grant(ContractRecord)} inside the caller's transaction. */
  static void grant(SqlConnection c, ContractRecord contract) throws SQLException {
    c.update("INSERT INTO datasets (name, owner) VALUES (?, ?) ON CONFLICT DO NOTHING", contract.dataset(),
        contract.owner());
    requireOwner(c, contract.dataset(), contract.owner(), "grant access to it");
    c.update("INSERT INTO contracts (dataset, beneficiary, read_only, begins_at_ms, expires_at_ms)"
            + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (dataset, beneficiary) DO UPDATE SET"
            + " read_only = excluded.read_only, begins_at_ms = excluded.begins_at_ms,"
            + " expires_at_ms = excluded.expires_at_ms",
        contract.dataset(), contract.beneficiary(), contract.readOnly(), contract.beginsAtMs(),
        contract.expiresAtMs());
  }

  /**
   * Takes a contract back.
   *
   * @return false when {@code beneficiary} had no contract on the dataset
   * @throws PermissionDeniedException when {@code owner} does not own the dataset
   */
  public boolean revoke(String dataset, String owner, String beneficiary) {
    return jdbc.transaction(c -> {
      requireOwner(c, dataset, owner, "revoke access to it");
      return c.update("DELETE FROM contracts WHERE dataset = ? AND beneficiary = ?", dataset, beneficiary) > 0;
    });
  }

  private static void requireOwner(SqlConnection c, String dataset, String owner, String what)
      throws SQLException {
    Optional<String> actual = ownerOf(c, dataset);
    if (actual.isEmpty()) {
      throw new io.dataclay.exceptions.DatasetDoesNotExistException("dataset '" + dataset + "' does not exist");
    }
    if (!actual.get().equals(owner)) {
      throw new PermissionDeniedException("dataset '" + dataset + "' is owned by '" + actual.get()
          + "': only its owner may " + what);
    }
  }

  private static Optional<String> ownerOf(SqlConnection c, String dataset) throws SQLException {
    return c.queryOne("SELECT owner FROM datasets WHERE name = ?", rs -> rs.getString(1), dataset);
  }
}
