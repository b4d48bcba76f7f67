package io.dataclay.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class CallScopedTest {
  private final CallScoped<String> token = new CallScoped<>();

  @Test
  void a_nested_call_holds_its_own_value_and_the_outer_one_is_back_when_it_ends_or_throws() {
    // setup
    List<String> seen = new ArrayList<>();
    // run
    String result = token.call("outer", () -> {
      seen.add(token.get());
      token.run("inner", () -> seen.add(token.get()));
      seen.add(token.get());
      assertThrows(IllegalStateException.class, () -> token.run("failing", () -> {
        throw new IllegalStateException("model code failed");
      }));
      seen.add(token.get());
      return "done";
    });
    // verify
    assertEquals("done", result);
    assertEquals(List.of("outer", "inner", "outer", "outer"), seen);
    assertNull(token.get());
  }

  @Test
  void another_thread_does_not_see_the_value() throws Exception {
    // run
    String elsewhere = token.call("mine", () -> CompletableFuture.supplyAsync(token::get).join());
    // verify
    assertNull(elsewhere);
  }
}
