package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.session.Session;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What a process vouched for answers only the same request (kind, class, name and payload), only
 * for a client's reads, and never after the models changed, even when the answer arrives later.
 */
class StoredReadsTest {
  private static final Session ANN = new Session("token", "ann", "ann", Set.of("ann"), Long.MAX_VALUE, false);
  private static final byte[] NO_ARGS = {1, 2, 3};

  private static ExecutionRequest read(ExecutionKind kind, String name, byte[] payload, boolean nested) {
    return new ExecutionRequest(ANN, UUID.randomUUID(), "m.Counter", kind, name, payload, nested);
  }

  @Test
  void aVouchedReadAnswersTheSameRequestOnAnyObjectAndNothingElse() {
    StoredReads reads = new StoredReads();
    reads.learn(read(ExecutionKind.CALL_METHOD, "get", NO_ARGS, false), "value", reads.generation());

    assertEquals("value", reads.field(read(ExecutionKind.CALL_METHOD, "get", NO_ARGS.clone(), false)));
    assertNull(reads.field(read(ExecutionKind.CALL_METHOD, "get", new byte[] {1, 2, 4}, false)));
    assertNull(reads.field(read(ExecutionKind.CALL_METHOD, "other", NO_ARGS, false)));
    assertNull(reads.field(read(ExecutionKind.GET_FIELD, "get", NO_ARGS, false)));
    assertNull(reads.field(read(ExecutionKind.CALL_METHOD, "get", NO_ARGS, true)), "model code reads in its call");
  }

  @Test
  void writesAndNestedCallsAreNeverLearnt() {
    StoredReads reads = new StoredReads();
    reads.learn(read(ExecutionKind.SET_FIELD, "value", NO_ARGS, false), "value", reads.generation());
    reads.learn(read(ExecutionKind.GET_FIELD, "value", new byte[0], true), "value", reads.generation());

    assertNull(reads.field(read(ExecutionKind.SET_FIELD, "value", NO_ARGS, false)));
    assertNull(reads.field(read(ExecutionKind.GET_FIELD, "value", new byte[0], false)));
  }

  @Test
  void aDeploymentForgetsWhatWasLearntAndWhatIsStillOnItsWay() {
    StoredReads reads = new StoredReads();
    ExecutionRequest get = read(ExecutionKind.GET_FIELD, "value", new byte[0], false);
    reads.learn(get, "value", reads.generation());
    long sentBefore = reads.generation();

    reads.forget();
    reads.learn(get, "value", sentBefore); // answered by the old code, arriving after the deployment

    assertNull(reads.field(get));
    reads.learn(get, "value", reads.generation());
    assertEquals("value", reads.field(get));
  }

  @Test
  void aProcessCannotGrowTheTablePastItsBound() {
    StoredReads reads = new StoredReads();
    for (int i = 0; i < StoredReads.MAX_KEPT + 10; i++) {
      reads.learn(read(ExecutionKind.GET_FIELD, "f" + i, new byte[0], false), "f" + i, reads.generation());
    }

    assertEquals("f0", reads.field(read(ExecutionKind.GET_FIELD, "f0", new byte[0], false)));
    assertNull(reads.field(read(ExecutionKind.GET_FIELD, "f" + StoredReads.MAX_KEPT, new byte[0], false)));
  }
}
