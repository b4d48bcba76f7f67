package io.dataclay.ds.snapshot;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * What a backend does at start with the imports a previous run left staged (their lists in the
 * imports directory): keeps the objects of those the Logic Module committed and removes the others,
 * waiting while the Logic Module may still be committing one that this backend had prepared. It
 * runs before the backend registers what it stores, so an import's objects never get registered
 * by that path.
 */
final class StagingRecovery {
  private static final Logger LOG = Logger.getLogger(StagingRecovery.class.getName());

  private final Path dir;
  private final ImportStaging.ImportStates lm;
  private final Consumer<Set<UUID>> remove;

  StagingRecovery(Path dir, ImportStaging.ImportStates lm, Consumer<Set<UUID>> remove) {
    this.dir = dir;
    this.lm = lm;
    this.remove = remove;
  }

  void run() throws InterruptedException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> listing = Files.newDirectoryStream(dir, "*" + StagingFile.SUFFIX)) {
      listing.forEach(files::add);
    } catch (IOException e) {
      throw new InternalException("cannot list " + dir + ": " + e.getMessage());
    }
    for (Path file : files) {
      StagingFile.Contents c;
      try {
        c = StagingFile.read(file);
      } catch (IOException e) {
        LOG.warning("ignoring " + file + ": " + e.getMessage());
        continue;
      }
      ImportStaging.State state = askAtStart(c.importId());
      while (state == ImportStaging.State.OPEN && c.prepared()) {
        LOG.info("import " + c.importId() + " is being committed by the Logic Module; waiting for its outcome");
        Thread.sleep(500);
        state = askAtStart(c.importId());
      }
      boolean keep = state == ImportStaging.State.COMMITTED;
      LOG.info((keep ? "keeping " : "removing ") + c.ids().size() + " objects staged by import " + c.importId()
          + " before this backend stopped");
      settle(file, c.ids(), keep);
    }
  }

  private void settle(Path file, Set<UUID> ids, boolean committed) {
    if (!committed) {
      remove.accept(ids);
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new InternalException("cannot remove " + file + ": " + e.getMessage());
    }
  }

  // At start the Logic Module has just accepted this backend's registration: a failed question is
  // retried a little.
  private ImportStaging.State askAtStart(String importId) throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        return lm.stateOf(importId);
      } catch (DataClayException e) {
        if (attempt == 10) {
          throw e;
        }
        Thread.sleep(1000);
      }
    }
  }
}
