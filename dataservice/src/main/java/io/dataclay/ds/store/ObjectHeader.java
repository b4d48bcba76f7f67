package io.dataclay.ds.store;

import io.dataclay.common.Language;
import java.util.Objects;

/**
 * What the store keeps about an object besides its fields.
 *
 * @param className Python "module.Class" or Java binary class name
 * @param versionOf the versioned object's ID when this object is a version, else null
 * @param masterBackendId the master's backend ID when this copy is a replica, else null
 */
public record ObjectHeader(
    String className, Language language, String dataset, String versionOf, String masterBackendId) {
  /** Validates the required parts. */
  public ObjectHeader {
    Objects.requireNonNull(className, "className");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(dataset, "dataset");
  }

  /** A header for an ordinary (not version, not replica) object. */
  public static ObjectHeader of(String className, Language language, String dataset) {
    return new ObjectHeader(className, language, dataset, null, null);
  }
}
