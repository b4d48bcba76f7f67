package storage;

/**
 * What COMPSs expects of a persistent object (its Storage Object Interface): every dataClay
 * model object is one, through {@link io.dataclay.api.DataClayObject}.
 */
public interface StubItf {
  /** The object's ID as text, or null when it is not persistent. */
  String getID();

  /** Makes the object persistent under {@code id} (an alias in dataClay). */
  void makePersistent(String id);

  /** Removes the object's persistent names (dataClay: its aliases; collection removes the object). */
  void deletePersistent();
}
