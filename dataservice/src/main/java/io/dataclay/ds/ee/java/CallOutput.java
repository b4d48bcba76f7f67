package io.dataclay.ds.ee.java;

import io.dataclay.common.CallScoped;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * What model code writes to System.out or System.err in a Java environment process: each line goes to
 * {@code sink} (the process's standard error, which the Data Service copies into its log, leading
 * every line with the account and escaping control characters) labelled with the call the writing
 * thread serves ({@code call com.example.Person.birthday on <object ID>: stdout: ...}). Each thread
 * keeps its own unfinished line; a line longer than {@link #MAX_LINE} bytes is written in pieces.
 */
final class CallOutput extends OutputStream {
  /** The longest piece of a line written as one. */
  static final int MAX_LINE = 4096;
  private static final CallScoped<String> CALL = new CallScoped<>();

  private final PrintStream sink;
  private final String stream;
  private final ThreadLocal<ByteArrayOutputStream> pending =
      ThreadLocal.withInitial(() -> new ByteArrayOutputStream(128));

  CallOutput(PrintStream sink, String stream) {
    this.sink = sink;
    this.stream = stream;
  }

  /** A print stream over a CallOutput, flushed at each line. */
  static PrintStream printStream(PrintStream sink, String stream) {
    return new PrintStream(new CallOutput(sink, stream), true, StandardCharsets.UTF_8);
  }

  /** "Class.method on id": a call's label, the method without its JVM descriptor ("say(Ljava/lang/String;)I"). */
  static String label(String className, String method, Object objectId) {
    int descriptor = method.indexOf('(');
    return className + "." + (descriptor < 0 ? method : method.substring(0, descriptor)) + " on " + objectId;
  }

  /**
   * What {@code work} returns, with what this thread writes meanwhile labelled with {@code call}
   * ("Class.method on id"); a nested call labels its own lines and gives the outer label back.
   */
  static <R> R serving(String call, Supplier<R> work) {
    return CALL.call(call, work);
  }

  @Override
  public void write(int b) {
    ByteArrayOutputStream line = pending.get();
    if (b == '\n') {
      emit(line);
      return;
    }
    line.write(b);
    if (line.size() >= MAX_LINE) {
      emit(line);
    }
  }

  @Override
  public void write(byte[] bytes, int offset, int length) {
    for (int i = offset; i < offset + length; i++) {
      write(bytes[i]);
    }
  }

  @Override
  public void flush() {
    ByteArrayOutputStream line = pending.get();
    if (line.size() > 0) {
      emit(line);
    }
    sink.flush();
  }

  private void emit(ByteArrayOutputStream line) {
    String call = CALL.get();
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    sink.println((call == null ? "" : "call " + call + ": ") + stream + ": " + text);
  }
}
