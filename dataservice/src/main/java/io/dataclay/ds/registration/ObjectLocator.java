package io.dataclay.ds.registration;

import java.util.UUID;

/** Finds where an object lives, as the Logic Module records it. */
@FunctionalInterface
public interface ObjectLocator {
  /**
   * Where an object lives.
   *
   * @throws io.dataclay.exceptions.ObjectDoesNotExistException when the Logic Module does not know it
   */
  ObjectLocation locate(UUID id);
}
