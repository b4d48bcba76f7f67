package io.dataclay.ds.ee;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Copies what an execution-environment process writes on its standard error (its own log lines, and
 * whatever model code prints or logs) into this Data Service's log, one line at a time, each led by
 * what the Data Service itself knows: the time, the language, the account the process serves and its
 * pid. The process runs a tenant's code, so its bytes are hostile: a line is cut at {@link #MAX_LINE}
 * bytes, every control character (and U+2028/2029) is written as an escape, so no byte it sends can
 * start a line of its own or drive a terminal; and it may write at most {@code bytesPerSecond} bytes
 * a second on average (bursts of {@link #BURST_SECONDS} seconds' worth): what is over is left out,
 * and a line says how much, at most one such line per {@link #NOTE_EVERY_SECONDS} seconds (and one
 * when the process ends).
 */
final class EnvironmentOutput implements Runnable {
  /** The longest line copied as one; the rest of a longer line follows as further lines, each marked. */
  static final int MAX_LINE = 4096;
  /** The burst a process may write at once, in seconds of its rate. */
  static final int BURST_SECONDS = 64;
  /** The least time between two lines saying how much was left out. */
  static final int NOTE_EVERY_SECONDS = 10;
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  private final InputStream in;
  private final String language;
  private final Supplier<String> account;
  private final long pid;
  private final PrintStream out;
  private final long bytesPerSecond;
  private final LongSupplier nanoClock;
  private double tokens;
  private long lastNanos;
  private long droppedLines;
  private long droppedBytes;
  private long lastNoteNanos;

  EnvironmentOutput(InputStream in, String language, Supplier<String> account, long pid, PrintStream out,
      long bytesPerSecond, LongSupplier nanoClock) {
    this.in = in;
    this.language = language;
    this.account = account;
    this.pid = pid;
    this.out = out;
    this.bytesPerSecond = bytesPerSecond;
    this.nanoClock = nanoClock;
    this.tokens = (double) bytesPerSecond * BURST_SECONDS;
    this.lastNanos = nanoClock.getAsLong();
    this.lastNoteNanos = lastNanos - NOTE_EVERY_SECONDS * 1_000_000_000L;
  }

  /** Copies {@code in} to this process's standard error on a daemon thread of its own, until it ends. */
  static void copy(InputStream in, String language, Supplier<String> account, long pid, long bytesPerSecond) {
    Thread t = new Thread(new EnvironmentOutput(in, language, account, pid, System.err, bytesPerSecond,
        System::nanoTime), language + "-ee-output-" + pid);
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void run() {
    byte[] line = new byte[MAX_LINE];
    int length = 0;
    boolean continued = false;
    byte[] chunk = new byte[8192];
    try (in) {
      int n;
      while ((n = in.read(chunk)) > 0) {
        for (int i = 0; i < n; i++) {
          byte b = chunk[i];
          if (b == '\n') {
            line(line, length, continued, false);
            length = 0;
            continued = false;
          } else {
            if (length == MAX_LINE) {
              line(line, length, continued, true);
              length = 0;
              continued = true;
            }
            line[length++] = b;
          }
        }
      }
    } catch (IOException e) {
      // the process ended: nothing more to copy
    }
    if (length > 0) {
      line(line, length, continued, false);
    }
    flushDropped();
  }

  // One line of the process (a piece of one, when `cut`), written if the rate allows it.
  private void line(byte[] bytes, int length, boolean continued, boolean cut) {
    if (!admit(length + 1)) {
      droppedLines++;
      droppedBytes += length + 1;
      return;
    }
    if (lastNanos - lastNoteNanos >= NOTE_EVERY_SECONDS * 1_000_000_000L) {
      flushDropped();
    }
    String text = escape(new String(bytes, 0, length, StandardCharsets.UTF_8));
    out.println(prefix() + (continued ? "(continued) " : "") + text + (cut ? " (cut at " + MAX_LINE + " bytes)" : ""));
  }

  private void flushDropped() {
    if (droppedLines > 0) {
      out.println(prefix() + "left out " + droppedLines + " line(s), " + droppedBytes + " bytes, of this process's "
          + "output: over its limit of " + bytesPerSecond + " bytes/s (" + EnvironmentSettings.OUTPUT_BYTES_S + ")");
      droppedLines = 0;
      droppedBytes = 0;
      lastNoteNanos = nanoClock.getAsLong();
    }
  }

  private String prefix() {
    return LocalDateTime.now().format(TIME) + " " + language + "-ee " + escape(account.get()) + " (pid " + pid + "): ";
  }

  // Token bucket: `bytes` may be written now.
  private boolean admit(int bytes) {
    long now = nanoClock.getAsLong();
    double burst = (double) bytesPerSecond * BURST_SECONDS;
    tokens = Math.min(burst, tokens + (now - lastNanos) / 1e9 * bytesPerSecond);
    lastNanos = now;
    if (tokens < bytes) {
      return false;
    }
    tokens -= bytes;
    return true;
  }

  /** {@code text} with every control character but tab, and U+2028/2029, written as {@code \xNN} / {@code \\uNNNN}. */
  static String escape(String text) {
    StringBuilder sb = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean control = (c < 0x20 && c != '\t') || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029';
      if (control && sb == null) {
        sb = new StringBuilder(text.length() + 16).append(text, 0, i);
      }
      if (sb != null) {
        if (!control) {
          sb.append(c);
        } else if (c <= 0xff) {
          sb.append(String.format("\\x%02x", (int) c));
        } else {
          sb.append(String.format("\\u%04x", (int) c));
        }
      }
    }
    return sb == null ? text : sb.toString();
  }
}
