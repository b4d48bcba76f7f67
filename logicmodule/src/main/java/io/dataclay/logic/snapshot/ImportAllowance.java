package io.dataclay.logic.snapshot;

/**
 * What an import may do to a cluster only when its administrator allows it by name ({@code
 * dataclay import --allow NAME,...}; proto {@code ImportAllowed}). A snapshot is its author's: a
 * plan needing more than was allowed is refused (docs/internals.md "Snapshots").
 */
public enum ImportAllowance {
  ACCOUNTS("accounts"),
  /** Creating administrators, or accounts that may register models. */
  ADMINS("admins"),
  PASSWORD_HASHES("password-hashes"),
  EXISTING_ACCOUNTS("existing-accounts"),
  CONTRACTS_ON_EXISTING_DATASETS("contracts-on-existing-datasets"),
  OBJECTS_IN_EXISTING_DATASETS("objects-in-existing-datasets"),
  MODELS("models");

  private final String flag;

  ImportAllowance(String flag) {
    this.flag = flag;
  }

  /** The name an administrator passes to {@code dataclay import --allow}. */
  public String flag() {
    return flag;
  }
}
