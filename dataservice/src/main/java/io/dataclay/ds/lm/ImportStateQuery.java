package io.dataclay.ds.lm;

import io.dataclay.ds.snapshot.ImportStaging;

/** Asks the Logic Module, in this backend's session, what became of an import. */
public final class ImportStateQuery implements ImportStaging.ImportStates {
  private final BackendSession admin;

  /** Queries made in {@code admin}'s session. */
  public ImportStateQuery(BackendSession admin) {
    this.admin = admin;
  }

  @Override
  public ImportStaging.State stateOf(String importId) {
    return switch (admin.client().getImportState(importId)) {
      case IMPORT_OPEN -> ImportStaging.State.OPEN;
      case IMPORT_COMMITTED -> ImportStaging.State.COMMITTED;
      default -> ImportStaging.State.UNKNOWN;
    };
  }
}
