package io.dataclay.client;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.rpc.TlsSettings;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Whether a backend serves a call port, asked once ({@code GetCallPort} over gRPC): {@link #port} is
 * the {@link CallPort}, or null while calls go over gRPC (not served; or asking failed or the port
 * could not be reached, asked again after {@link #RETRY_AFTER_NANOS}: a backend that restarted
 * listens on another port).
 */
final class CallPortLookup implements AutoCloseable {
  /** How long a call port that could not be asked for or reached is left alone. */
  static final long RETRY_AFTER_NANOS = 10_000_000_000L;

  private final String host;
  private final TlsSettings tls;
  private volatile CallPort port;
  private boolean served = true;
  private boolean closed;
  private boolean asking; // a thread is asking the backend for the port's number
  private long askAfter = System.nanoTime();

  /** The OpenTelemetry Java agent's entry class, on the system class path when the agent is attached. */
  static final String OTEL_AGENT = "io.opentelemetry.javaagent.OpenTelemetryAgent";

  /**
   * Whether this program's calls are traced, so that they must stay gRPC calls (the call port's
   * frames are not): OpenTelemetry's Java agent is attached, or {@code env} names an OTLP endpoint
   * and does not disable the SDK (as a Python client decides).
   */
  static boolean traced(Map<String, String> env) {
    try {
      Class.forName(OTEL_AGENT, false, ClassLoader.getSystemClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError absent) {
      // no agent
    }
    if ("true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", "").strip())) {
      return false;
    }
    return !env.getOrDefault("OTEL_EXPORTER_OTLP_ENDPOINT", "").isBlank()
        || !env.getOrDefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").isBlank();
  }

  CallPortLookup(String host, TlsSettings tls) {
    this.host = host;
    this.tls = tls;
  }

  /**
   * The call port, asking {@code ask} for its number (0: not served) the first time; null: use gRPC.
   * One thread asks; the others' calls go over gRPC meanwhile instead of waiting for its answer.
   */
  CallPort port(IntSupplier ask) {
    CallPort p = port;
    if (p != null) {
      return p;
    }
    synchronized (this) {
      if (port != null || closed || !served || asking || System.nanoTime() - askAfter < 0) {
        return port;
      }
      asking = true;
    }
    int number = -1;
    try {
      number = ask.getAsInt();
    } catch (DataClayException e) {
      // asked again after a while
    } finally {
      synchronized (this) {
        asking = false;
        if (number < 0) {
          askAfter = System.nanoTime() + RETRY_AFTER_NANOS;
        } else if (number == 0) {
          served = false;
        } else if (!closed) {
          port = new CallPort(host, number, tls, Channels.unreachableMs());
        }
      }
    }
    return port;
  }

  /** The call port in use now, without asking (null: none). */
  CallPort current() {
    return port;
  }

  /** {@code p} could not be reached: calls go over gRPC for a while, then the backend is asked again. */
  void unusable(CallPort p) {
    synchronized (this) {
      if (port == p) {
        port = null;
        askAfter = System.nanoTime() + RETRY_AFTER_NANOS;
      }
    }
    p.close();
  }

  @Override
  public void close() {
    CallPort p;
    synchronized (this) {
      closed = true;
      p = port;
      port = null;
    }
    if (p != null) {
      p.close();
    }
  }
}
