package io.dataclay.ds.ee.java;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class CallOutputTest {
  @Test
  void each_printed_line_is_labelled_with_the_call_of_its_thread_and_its_stream() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream sink = new PrintStream(log, true, StandardCharsets.UTF_8);
    PrintStream out = CallOutput.printStream(sink, "stdout");
    CallOutput.serving("com.example.Person.birthday on 42", () -> {
      out.println("turning 43\nforged line");
      out.print("unfinished");
      out.flush();
      return null;
    });
    out.println("between calls");
    assertEquals("com.example.Person.say on 42",
        CallOutput.label("com.example.Person", "say(Ljava/lang/String;)I", 42));
    assertEquals(List.of("call com.example.Person.birthday on 42: stdout: turning 43",
        "call com.example.Person.birthday on 42: stdout: forged line",
        "call com.example.Person.birthday on 42: stdout: unfinished", "stdout: between calls"),
        log.toString(StandardCharsets.UTF_8).lines().toList());
  }
}
