package storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class StorageItfTest {
  private static final String SOME_ID = "123e4567-e89b-12d3-a456-426614174000";

  @TempDir Path dir;

  @AfterEach
  void leaveUninitialised() throws Exception {
    StorageItf.finish();
  }

  @Test
  void everyCallBeforeInitFailsSayingInitIsMissing() {
    // run + verify
    assertNotInitialised(() -> StorageItf.getByID(SOME_ID));
    assertNotInitialised(() -> StorageItf.getLocations(SOME_ID));
    assertNotInitialised(() -> StorageItf.newReplica(SOME_ID, "localhost"));
    assertNotInitialised(() -> StorageItf.newVersion(SOME_ID, true, null));
    assertNotInitialised(() -> StorageItf.consolidateVersion(SOME_ID));
    assertNotInitialised(() -> StorageItf.executeTask(SOME_ID, "run()V", new Object[0], "localhost",
        new CallbackHandler() {}));
  }

  @Test
  void finishWithoutInitIsANoOp() throws Exception {
    // run: twice, as a COMPSs worker that never initialised might
    StorageItf.finish();
    StorageItf.finish();
    // verify
    assertNotInitialised(() -> StorageItf.getByID(SOME_ID));
  }

  @Test
  void initWithAMissingConfigurationFileFailsNamingTheFile() {
    // setup
    Path missing = dir.resolve("nope.properties");
    // run
    StorageException e = assertThrows(StorageException.class, () -> StorageItf.init(missing.toString()));
    // verify
    assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    assertTrue(e.getCause() instanceof InvalidArgumentException);
    assertNotInitialised(() -> StorageItf.getByID(SOME_ID));
  }

  @Test
  void initAgainstALogicModuleThatIsNotThereFailsAndLeavesTheInterfaceUninitialised() throws Exception {
    // setup: a configuration naming a port nobody listens on
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path conf = dir.resolve("client.properties");
    Files.writeString(conf, "DATACLAY_HOST=127.0.0.1\nDATACLAY_PORT=" + port + "\nDATACLAY_USER=u\nDATACLAY_PASSWORD=p\n");
    // run
    StorageException e = assertThrows(StorageException.class, () -> StorageItf.init(conf.toString()));
    // verify
    assertTrue(e.getCause() instanceof BackendUnavailableException, String.valueOf(e.getCause()));
    assertNotInitialised(() -> StorageItf.getByID(SOME_ID));
  }

  @Test
  void objectIdsMustBeCanonicalUuids() throws Exception {
    // run + verify
    assertEquals(UUID.fromString(SOME_ID), StorageItf.parseId(SOME_ID));
    assertEquals(UUID.fromString(SOME_ID), StorageItf.parseId(SOME_ID.toUpperCase()));
    for (String bad : new String[] {null, "", "psco_1", "1-1-1-1-1", SOME_ID + "0"}) {
      StorageException e = assertThrows(StorageException.class, () -> StorageItf.parseId(bad));
      assertTrue(e.getMessage().contains("object ID"), e.getMessage());
    }
  }

  @Test
  void executeTaskChecksItsCallbackDescriptorAndArgumentsFirst() {
    // run
    StorageException noCallback = assertThrows(StorageException.class,
        () -> StorageItf.executeTask(SOME_ID, "run()V", new Object[0], "h", null));
    StorageException badDescriptor = assertThrows(StorageException.class,
        () -> StorageItf.executeTask(SOME_ID, "run(", new Object[0], "h", new CallbackHandler() {}));
    StorageException wrongCount = assertThrows(StorageException.class,
        () -> StorageItf.executeTask(SOME_ID, "add(I)V", new Object[] {1, 2}, "h", new CallbackHandler() {}));
    // verify
    assertTrue(noCallback.getMessage().contains("callback is null"));
    assertTrue(badDescriptor.getMessage().contains("')'"), badDescriptor.getMessage());
    assertTrue(wrongCount.getMessage().contains("takes 1 arguments"), wrongCount.getMessage());
  }

  @Test
  void getResultReturnsASuccessfulTasksResultAndRaisesAFailedTasksError() throws Exception {
    // setup
    IllegalStateException cause = new IllegalStateException("no words");
    CallbackEvent ok = new CallbackEvent("r1", CallbackEvent.EventType.SUCCESS, 42);
    CallbackEvent failed = new CallbackEvent("r2", CallbackEvent.EventType.FAIL, cause);
    // run
    Object result = StorageItf.getResult(ok);
    StorageException e = assertThrows(StorageException.class, () -> StorageItf.getResult(failed));
    // verify
    assertEquals(42, result);
    assertSame(cause, e.getCause());
    assertTrue(e.getMessage().contains("task r2 failed") && e.getMessage().contains("no words"), e.getMessage());
    assertThrows(StorageException.class, () -> StorageItf.getResult(null));
    assertThrows(StorageException.class, () -> StorageItf.getResult(new CallbackEvent()));
  }

  @Test
  void callbackEventsRefuseAMissingRequestIdOrType() {
    // run + verify
    assertThrows(IllegalArgumentException.class, () -> new CallbackEvent(null, CallbackEvent.EventType.SUCCESS, 1));
    assertThrows(IllegalArgumentException.class, () -> new CallbackEvent("r", null, 1));
  }

  private interface Call {
    void run() throws Exception;
  }

  private static void assertNotInitialised(Call call) {
    StorageException e = assertThrows(StorageException.class, call::run);
    assertTrue(e.getMessage().contains("not initialised"), e.getMessage());
  }
}
