package io.dataclay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.proto.Empty;
import io.dataclay.rpc.GrpcErrors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class RepliesTest {
  @Test
  void now_answers_the_value_once_and_completes() {
    Recorded<String> out = new Recorded<>(false);
    Replies.now(out, () -> "v");
    assertEquals(List.of("v"), out.values);
    assertTrue(out.completed);
    assertNull(out.error);
  }

  @Test
  void now_answers_what_the_body_threw_as_its_mapped_status() {
    Recorded<String> out = new Recorded<>(false);
    Replies.now(out, () -> {
      throw new ObjectNotHereException("elsewhere");
    });
    assertTrue(out.values.isEmpty());
    assertEquals(Status.Code.FAILED_PRECONDITION, ((StatusRuntimeException) out.error).getStatus().getCode());
    assertEquals(ObjectNotHereException.class, GrpcErrors.fromStatus((StatusRuntimeException) out.error).getClass());
  }

  @Test
  void done_answers_empty_after_the_work_or_the_mapped_error_it_threw() {
    // setup
    Recorded<Empty> ok = new Recorded<>(false);
    Recorded<Empty> failed = new Recorded<>(false);
    List<String> ran = new ArrayList<>();
    // run
    Replies.done(ok, () -> ran.add("work"));
    Replies.done(failed, () -> {
      throw new ObjectNotHereException("elsewhere");
    });
    // verify
    assertEquals(List.of("work"), ran);
    assertEquals(List.of(Empty.getDefaultInstance()), ok.values);
    assertTrue(ok.completed);
    assertTrue(failed.values.isEmpty());
    assertEquals(ObjectNotHereException.class, GrpcErrors.fromStatus((StatusRuntimeException) failed.error).getClass());
  }

  @Test
  void later_answers_the_cause_a_future_failed_with_not_its_wrapper() {
    Recorded<String> out = new Recorded<>(false);
    CompletableFuture<Integer> future = new CompletableFuture<>();
    Replies.later(out, () -> future, Object::toString);
    assertNull(out.error);
    future.completeExceptionally(new CompletionException(new ObjectNotHereException("elsewhere")));
    assertEquals(ObjectNotHereException.class, GrpcErrors.fromStatus((StatusRuntimeException) out.error).getClass());
  }

  @Test
  void later_answers_the_converted_value_when_the_future_completes() {
    Recorded<String> out = new Recorded<>(false);
    CompletableFuture<Integer> future = new CompletableFuture<>();
    Replies.later(out, () -> future, Object::toString);
    assertTrue(out.values.isEmpty());
    future.complete(7);
    assertEquals(List.of("7"), out.values);
    assertTrue(out.completed);
  }

  @Test
  void an_answer_to_a_caller_that_went_away_is_dropped() {
    Replies.now(new Recorded<String>(true), () -> "v");
    Replies.now(new Recorded<String>(true), () -> {
      throw new ObjectNotHereException("elsewhere");
    });
  }
}
