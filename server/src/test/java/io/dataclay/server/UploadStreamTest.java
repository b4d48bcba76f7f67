package io.dataclay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.rpc.GrpcErrors;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UploadStreamTest {
  /** Sums the numbers streamed; a negative one is refused. */
  private static final class Sum extends UploadStream<Integer, Integer> {
    final List<Integer> taken = new ArrayList<>();
    int abandoned;

    Sum(Recorded<Integer> out) {
      super(out);
    }

    @Override
    protected void take(Integer n) {
      if (n < 0) {
        throw new InvalidArgumentException("n: negative");
      }
      taken.add(n);
    }

    @Override
    protected Integer answer() {
      return taken.stream().mapToInt(Integer::intValue).sum();
    }

    @Override
    protected void abandon() {
      abandoned++;
    }
  }

  @Test
  void the_answer_comes_once_the_client_sent_everything() {
    // setup
    Recorded<Integer> out = new Recorded<>(false);
    Sum sum = new Sum(out);
    // run
    sum.onNext(1);
    sum.onNext(2);
    sum.onCompleted();
    // verify
    assertEquals(List.of(3), out.values);
    assertTrue(out.completed);
    assertNull(out.error);
    assertEquals(0, sum.abandoned);
  }

  @Test
  void the_first_failure_answers_its_error_abandons_and_the_rest_of_the_stream_is_ignored() {
    // setup
    Recorded<Integer> out = new Recorded<>(false);
    Sum sum = new Sum(out);
    // run
    sum.onNext(1);
    sum.onNext(-1);
    sum.onNext(2);
    sum.onCompleted();
    // verify
    assertEquals(List.of(1), sum.taken);
    assertEquals(1, sum.abandoned);
    assertEquals(List.of(), out.values);
    assertFalse(out.completed);
    assertEquals(InvalidArgumentException.class, GrpcErrors.fromStatus((StatusRuntimeException) out.error).getClass());
  }

  @Test
  void a_client_that_goes_away_abandons_the_stream_and_an_answer_it_cannot_get_too() {
    // setup
    Sum left = new Sum(new Recorded<>(false));
    Sum cancelled = new Sum(new Recorded<>(true));
    // run
    left.onNext(1);
    left.onError(new RuntimeException("client gone"));
    cancelled.onNext(1);
    cancelled.onCompleted();
    // verify
    assertEquals(1, left.abandoned);
    assertEquals(1, cancelled.abandoned);
  }
}
