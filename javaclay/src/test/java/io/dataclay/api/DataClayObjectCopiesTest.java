package io.dataclay.api;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectNotPersistentException;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class DataClayObjectCopiesTest {
  /** A model class for the checks: no runtime is needed before the arguments are checked. */
  static class Counter extends DataClayObject {
    int value;
  }

  @Test
  void copiesVersionsAndMovesOfAVolatileObjectFailSayingItIsNotPersistent() {
    // setup
    Counter c = new Counter();
    UUID somewhere = UUID.randomUUID();
    // run + verify
    assertNotPersistent(c::newReplica);
    assertNotPersistent(() -> c.newReplica(somewhere));
    assertNotPersistent(() -> c.newReplica(somewhere, false));
    assertNotPersistent(c::newVersion);
    assertNotPersistent(() -> c.newVersion(somewhere));
    assertNotPersistent(c::consolidateVersion);
    assertNotPersistent(() -> c.move(somewhere));
    assertNotPersistent(() -> c.move(somewhere, true));
    assertNotPersistent(c::getLocation);
    assertNotPersistent(c::getAllLocations);
  }

  @Test
  void moveWithoutABackendFailsNamingTheMissingBackend() {
    // setup: a proxy as a client holds it
    Counter c = new Counter();
    ObjectStates.set(c, new ObjectState(UUID.randomUUID(), UUID.randomUUID(), true));
    // run
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> c.move(null));
    InvalidArgumentException recursive = assertThrows(InvalidArgumentException.class, () -> c.move(null, true));
    // verify
    assertTrue(e.getMessage().contains("backendId is null"), e.getMessage());
    assertTrue(recursive.getMessage().contains("backendId is null"), recursive.getMessage());
  }

  @Test
  void getByIdWithoutASessionFailsSayingDataClayIsNotInitialised() {
    // run
    ObjectNotPersistentException e = assertThrows(ObjectNotPersistentException.class,
        () -> DataClay.getByID(UUID.randomUUID()));
    // verify
    assertTrue(e.getMessage().contains("DataClay.init()"), e.getMessage());
  }

  private static void assertNotPersistent(Executable call) {
    ObjectNotPersistentException e = assertThrows(ObjectNotPersistentException.class, call);
    assertTrue(e.getMessage().contains("is not persistent"), e.getMessage());
  }
}
