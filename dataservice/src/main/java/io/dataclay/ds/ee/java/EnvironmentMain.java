package io.dataclay.ds.ee.java;

import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.ee.FramedStream;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.environments.ExecutionResult;
import io.dataclay.ds.environments.SequencedDelta;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.CallScope;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.Model;
import io.dataclay.rpc.GrpcErrors;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.Logger;

/**
 * A confined Java execution environment: one process per account, started by its Data Service
 * through the sandbox launcher (which confined it before this JVM started). Its only channel is
 * the link on standard input and output; it reads object state and reaches other servers only
 * through it, in the session of the call it is running, and never holds a token or a secret.
 * Its standard error is the Data Service's log; what model code prints goes there too.
 */
public final class EnvironmentMain {
  /** This runtime's name in the hello. */
  static final String RUNTIME_VERSION = "javaclay-ee 0.1.0";
  private static final Logger LOG = Logger.getLogger(EnvironmentMain.class.getName());

  private final LinkEndpoint link;
  private final JavaCalls calls;
  private final UUID backendId;
  private final ExecutorService workers;

  private EnvironmentMain(LinkEndpoint link, JavaCalls calls, UUID backendId, int threads) {
    this.link = link;
    this.calls = calls;
    this.backendId = backendId;
    this.workers = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "dataclay-java-ee-call");
      t.setDaemon(true);
      return t;
    });
  }

  /** Serves the link until the Data Service closes it; exits 0 then, 1 when the link broke, 2 on bad settings. */
  public static void main(String[] args) {
    FileInputStream in = new FileInputStream(FileDescriptor.in);
    FileOutputStream out = new FileOutputStream(FileDescriptor.out);
    // What model code prints must not reach the link: standard output becomes standard error, each line
    // labelled with the call that printed it (CallOutput).
    PrintStream log = System.err;
    // this process's own log records: one line each, written to the real standard error (the root
    // handler takes System.err when it is made, so it is made now, before System.err is replaced)
    System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s %3$s: %5$s%6$s%n");
    Logger.getLogger("").getHandlers();
    System.setOut(CallOutput.printStream(log, "stdout"));
    System.setErr(CallOutput.printStream(log, "stderr"));
    System.setIn(new ByteArrayInputStream(new byte[0]));
    Map<String, String> env = System.getenv();
    UUID backend;
    int threads;
    try {
      backend = UUID.fromString(env.getOrDefault("DATACLAY_EE_BACKEND_ID", ""));
      threads = Integer.parseInt(env.getOrDefault("DATACLAY_EE_THREADS", "16"));
      if (threads < 1) {
        throw new IllegalArgumentException("DATACLAY_EE_THREADS must be positive");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("java environment: bad settings: " + e.getMessage());
      System.exit(2);
      return;
    }
    JavaEnvironmentConfig config = JavaEnvironmentConfig.from(Map.of(JavaEnvironmentConfig.ALLOW,
        env.getOrDefault("DATACLAY_EE_JAVA_ALLOW", "")));
    LinkEndpoint link = new LinkEndpoint(new FramedStream(new BufferedInputStream(in, 1 << 16),
        new BufferedOutputStream(out, 1 << 16)));
    EnvironmentMain main = new EnvironmentMain(link, new JavaCalls(config, null), backend, threads);
    System.exit(main.serve(env.getOrDefault("DATACLAY_SANDBOX_APPLIED", "none")));
  }

  private int serve(String confinement) {
    link.send(EnvironmentMessage.newBuilder().setHello(EnvironmentHello.newBuilder()
        .setPid((int) ProcessHandle.current().pid()).setRuntimeVersion(RUNTIME_VERSION)
        .setConfinement(confinement)).build());
    try {
      while (true) {
        DataServiceMessage m = link.read();
        if (m == null) {
          return 0;
        }
        switch (m.getKindCase()) {
          case EXECUTE -> {
            ExecuteRequest r = m.getExecute();
            workers.execute(() -> run(r));
          }
          case DEPLOY -> deploy(m.getDeploy().getModelsList());
          case LOADED -> link.answer(m.getLoaded().getRequestId(), m);
          case RELAYED -> link.answer(m.getRelayed().getRequestId(), m);
          default -> { } // evict: nothing is kept between calls
        }
      }
    } catch (IOException e) {
      LOG.severe("the link to the Data Service failed: " + e.getMessage());
      return 1;
    } finally {
      link.end();
    }
  }

  // The list is whole: models missing from it are no longer this account's to use.
  private void deploy(List<Model> models) {
    List<ModelBundle> bundles = new ArrayList<>();
    Set<String> present = new HashSet<>();
    for (int i = 0; i < models.size(); i++) {
      ModelBundle b = Messages.bundle(models.get(i), "deploy.models[" + i + "]");
      bundles.add(b);
      present.add(b.namespace());
    }
    Set<String> gone = new HashSet<>(calls.namespaces());
    gone.removeAll(present);
    calls.withdraw(gone);
    try {
      calls.deploy(bundles);
    } catch (RuntimeException e) {
      LOG.warning("could not install a model: " + e.getMessage());
    }
  }

  private void run(ExecuteRequest r) {
    ExecuteResult.Builder out = ExecuteResult.newBuilder().setCallId(r.getCallId());
    try {
      ExecutionRequest request = request(r);
      calls.run(new LinkedHost(link, r.getCallId(), backendId), request, result -> {
        link.send(EnvironmentMessage.newBuilder().setResult(message(out, result)).build());
        return null;
      });
    } catch (DataClayException e) {
      link.send(EnvironmentMessage.newBuilder().setResult(out.setError(GrpcErrors.info(e))).build());
    } catch (RuntimeException e) {
      link.send(EnvironmentMessage.newBuilder().setResult(out.setError(GrpcErrors.info(
          new InternalException("the Java environment failed: " + e)))).build());
    }
  }

  private static ExecutionRequest request(ExecuteRequest r) {
    CallScope c = r.getCaller();
    Session session = new Session("", c.getUsername(), c.getDataset(), Set.copyOf(c.getDatasetsList()),
        Set.copyOf(c.getReadOnlyDatasetsList()), Long.MAX_VALUE, false, false, 0);
    ExecutionKind kind = switch (r.getKind()) {
      case CALL_METHOD -> ExecutionKind.CALL_METHOD;
      case GET_FIELD -> ExecutionKind.GET_FIELD;
      case SET_FIELD -> ExecutionKind.SET_FIELD;
      default -> throw new InvalidArgumentException("execute.kind " + r.getKind() + " is not known");
    };
    return new ExecutionRequest(session, Messages.uuid(r.getObjectId(), "execute.object_id"), r.getClassName(), kind,
        r.getName(), r.getPayload().toByteArray());
  }

  private static ExecuteResult message(ExecuteResult.Builder out, ExecutionResult result) {
    // a method that failed may still have changed what it touched: the Data Service stores that too
    if (result.error() != null) {
      out.setError(GrpcErrors.info(result.error()));
    } else {
      out.setResult(com.google.protobuf.ByteString.copyFrom(result.value()));
    }
    result.newObjects().forEach(o -> out.addNewObjects(Messages.objectData(o)));
    for (SequencedDelta d : result.deltas()) {
      out.addDeltas(Messages.objectDelta(d.delta()).toBuilder().setSequence(d.sequence()));
    }
    return out.build();
  }
}
