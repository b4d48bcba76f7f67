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
    return jdbc.transaction(c -> {
      int inserted = c.update("INSERT INTO accounts (username, password_hash, password_salt,"
              + " password_iterations, admin) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
          a.username(), a.passwordHash(), a.passwordSalt(), a.passwordIterations(), a.admin());
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
    });
  }

  /** The account of that name, if any. */
  public Optional<AccountRecord> find(String username) {
    return jdbc.transaction(c -> c.queryOne("SELECT username, password_hash, password_salt,"
            + " password_iterations, admin FROM accounts WHERE username = ?",
        rs -> new AccountRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5)),
        username));
  }

  /** The owner of a dataset, if it exists. */
  public Optional<String> datasetOwner(String dataset) {
    return jdbc.transaction(c -> ownerOf(c, dataset));
  }

  /** Every dataset the account owns or was granted, sorted by name. */
  public List<String> datasetsOf(String username) {
    return jdbc.transaction(c -> c.query("SELECT name FROM datasets WHERE owner = ?"
        + " UNION SELECT dataset FROM contracts WHERE beneficiary = ? ORDER BY 1",
        rs -> rs.getString(1), username, username));
  }

  /**
   * Grants {@code beneficiary} access to {@code dataset}, first creating the dataset owned by
   * {@code owner} when it does not exist; granting twice changes nothing.
   *
   * @throws PermissionDeniedException when the dataset exists and {@code owner} does not own it
   */
  public void grant(String dataset, String owner, String beneficiary) {
    jdbc.transaction(c -> {
      c.update("INSERT INTO datasets (name, owner) VALUES (?, ?) ON CONFLICT DO NOTHING", dataset, owner);
      String actual = ownerOf(c, dataset).orElseThrow();
      if (!actual.equals(owner)) {
        throw new PermissionDeniedException("dataset '" + dataset + "' is owned by '" + actual
            + "': only its owner may grant access to it");
      }
      c.update("INSERT INTO contracts (dataset, beneficiary) VALUES (?, ?) ON CONFLICT DO NOTHING",
          dataset, beneficiary);
      return null;
    });
  }

  private static Optional<String> ownerOf(PooledConnection c, String dataset) throws SQLException {
    return c.queryOne("SELECT owner FROM datasets WHERE name = ?", rs -> rs.getString(1), dataset);
  }
}
