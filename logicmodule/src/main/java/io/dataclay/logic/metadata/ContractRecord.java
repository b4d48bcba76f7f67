package io.dataclay.logic.metadata;

import java.util.Objects;

/**
 * A data contract: {@code owner} lets {@code beneficiary} use {@code dataset}, read-only or
 * read-write, from {@code beginsAtMs} (epoch ms) until {@code expiresAtMs} (0: no end).
 */
public record ContractRecord(String dataset, String owner, String beneficiary, boolean readOnly, long beginsAtMs,
    long expiresAtMs) {
  /** Requires every text part to be present. */
  public ContractRecord {
    Objects.requireNonNull(dataset, "dataset");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(beneficiary, "beneficiary");
  }

  /** Whether the contract is in force at {@code nowMs}. */
  public boolean inForce(long nowMs) {
    return beginsAtMs <= nowMs && (expiresAtMs == 0 || nowMs < expiresAtMs);
  }

  /** The next moment after {@code nowMs} at which the contract starts or stops being in force; 0: none. */
  public long nextChangeAfter(long nowMs) {
    if (beginsAtMs > nowMs) {
      return beginsAtMs;
    }
    return expiresAtMs > nowMs ? expiresAtMs : 0;
  }
}
