package io.dataclay.ds.ee.java;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestLogicModule;
import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.execution.ResultApplier;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.lm.RemoteLogicModule;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.models.ModelRegistry;
import io.dataclay.ds.objects.IdClaims;
import io.dataclay.ds.objects.ReferenceAccess;
import io.dataclay.ds.replication.Mastership;
import io.dataclay.ds.replication.ReplicaSets;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.rpc.TlsSettings;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Deploying Java models into the environment: versions, redeploys, conflicts and bad class files. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JavaDeployTest {
  private static final String GREETER = "gen.Greeter";

  @RegisterExtension final TestCluster cluster = TestCluster.forEachTest();
  private final ObjectStore store = ObjectStores.open(new StoreConfig("memory", null, 16 << 20));
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final Session ann = new Session("token", "ann", "ann", Set.of("ann"), Long.MAX_VALUE, false);
  private final JavaModels values = new JavaModels(Set.of());
  private JavaEnvironment env;
  private BackendSession admin;

  @BeforeEach
  void start() throws Exception {
    UUID backend = UUID.randomUUID();
    admin = BackendSession.over(cluster.lmChannel(), TestLogicModule.SECRET, backend);
    admin.login();
    RemoteLogicModule lm = new RemoteLogicModule(admin, backend);
    ResultApplier applier = new ResultApplier(store, lm, new IdClaims(), executor, new ReplicaSets(null, lm, new Mastership(backend, System::nanoTime), executor),
        new ReferenceRecorder(store, new SessionCache(lm)::resolve, executor, ReferenceRecorder.DEFAULT_BUDGET),
        new ClassAvailability(new ModelRegistry(), 0), new Environments(), new ReferenceAccess(store, lm, new IdClaims()));
    env = new JavaEnvironment(store, applier, executor, backend, JavaEnvironmentConfig.from(Map.of()),
        cluster::adminLm, TlsSettings.plaintext(), List::of);
  }

  @AfterEach
  void stop() throws Exception {
    env.close();
    admin.close();
    executor.shutdownNow();
    store.close();
  }

  private static ModelBundle greeter(String namespace, long version, String greeting) {
    String source = "package gen; public class Greeter extends io.dataclay.api.DataClayObject {"
        + " public String greet() { return \"" + greeting + "\"; } }";
    return new ModelBundle(namespace, Language.JAVA, version,
        List.of(new ModelBundle.ModelFile("gen/Greeter.class", compile(source))), List.of(GREETER));
  }

  private UUID storedGreeter() {
    UUID id = UUID.randomUUID();
    store.put(new StoredObject(id, ObjectHeader.of(GREETER, Language.JAVA, "ann"), Map.of()));
    return id;
  }

  private Object greet(UUID id) throws Exception {
    return values.decode(env.execute(new ExecutionRequest(ann, id, GREETER, ExecutionKind.CALL_METHOD, "greet",
        new byte[0])).get(10, TimeUnit.SECONDS));
  }

  @Test
  void a_redeploy_replaces_the_classes_and_an_older_version_never_does() throws Exception {
    // setup
    env.deploy(List.of(greeter("greetings", 1, "hello v1")));
    UUID id = storedGreeter();
    Object first = greet(id);
    // run
    env.deploy(List.of(greeter("greetings", 2, "hello v2")));
    Object second = greet(id);
    env.deploy(List.of(greeter("greetings", 1, "hello v1")));
    Object afterOlder = greet(id);
    // verify
    assertEquals("hello v1", first);
    assertEquals("hello v2", second);
    assertEquals("hello v2", afterOlder);
  }

  @Test
  void a_class_of_another_namespace_is_a_namespace_conflict_and_changes_nothing() throws Exception {
    // setup
    env.deploy(List.of(greeter("greetings", 1, "mine")));
    UUID id = storedGreeter();
    // run
    NamespaceConflictException e = assertThrows(NamespaceConflictException.class,
        () -> env.deploy(List.of(greeter("thieves", 1, "stolen"))));
    // verify
    assertTrue(e.getMessage().contains(GREETER), e.getMessage());
    assertEquals("mine", greet(id));
  }

  @Test
  void a_malformed_class_file_fails_the_call_naming_the_class() {
    // setup
    env.deploy(List.of(new ModelBundle("broken", Language.JAVA, 1,
        List.of(new ModelBundle.ModelFile("gen/Greeter.class", new byte[] {(byte) 0xca, (byte) 0xfe})),
        List.of(GREETER))));
    UUID id = storedGreeter();
    // run
    ExecutionException e = assertThrows(ExecutionException.class, () -> greet(id));
    // verify
    assertTrue(e.getCause() instanceof ClassNotRegisteredException, String.valueOf(e.getCause()));
    assertTrue(e.getCause().getMessage().contains(GREETER), e.getCause().getMessage());
  }

  /** Compiles one source to its class file in memory (against this test's class path). */
  private static byte[] compile(String source) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JavaFileObject input = new SimpleJavaFileObject(URI.create("string:///gen/Greeter.java"), JavaFileObject.Kind.SOURCE) {
      @Override
      public CharSequence getCharContent(boolean ignore) {
        return source;
      }
    };
    var files = new ForwardingJavaFileManager<>(javac.getStandardFileManager(null, null, null)) {
      @Override
      public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
          FileObject sibling) {
        return new SimpleJavaFileObject(URI.create("mem:///" + className + ".class"), kind) {
          @Override
          public OutputStream openOutputStream() {
            return out;
          }
        };
      }
    };
    List<String> options = List.of("-classpath", System.getProperty("java.class.path"));
    if (!javac.getTask(null, files, null, options, null, List.of(input)).call()) {
      throw new IllegalStateException("test source did not compile");
    }
    return out.toByteArray();
  }
}
