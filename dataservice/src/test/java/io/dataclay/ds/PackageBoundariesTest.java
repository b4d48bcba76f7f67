package io.dataclay.ds;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Data Service's package boundaries (docs/internals.md, "Data Service packages"), checked on
 * its main classes so that a new dependency that breaks one fails the build.
 */
@AnalyzeClasses(packages = "io.dataclay.ds", importOptions = ImportOption.DoNotIncludeTests.class)
class PackageBoundariesTest {
  /** The feature packages: the Data Service's logic, in plain types. */
  private static final String[] FEATURES = {
      "io.dataclay.ds.session..", "io.dataclay.ds.models..", "io.dataclay.ds.deployment..",
      "io.dataclay.ds.registration..", "io.dataclay.ds.collection..", "io.dataclay.ds.environments..",
      "io.dataclay.ds.objects..", "io.dataclay.ds.replication..", "io.dataclay.ds.execution..",
      "io.dataclay.ds.status.."};

  /**
   * Dependencies of feature packages on the client library that exist today (issue 24: the core
   * does not depend on the client library). Frozen: remove an entry when it goes, never add one.
   */
  private static final Set<String> KNOWN_CLIENT_USES = Set.of(
      // a replica's silence is judged by the client's keepalive figures
      "io.dataclay.ds.replication.ReplicaSets -> io.dataclay.client.Channels");

  /** No two top-level packages of the Data Service depend on each other, directly or not. */
  @ArchTest
  static final ArchRule packagesAreFreeOfCycles =
      slices().matching("io.dataclay.ds.(*)..").should().beFreeOfCycles();

  /** The outgoing adapters share converters with the servicer through ds.codec, never the servicer itself. */
  @ArchTest
  static final ArchRule outgoingAdaptersDoNotUseTheServicer =
      noClasses().that().resideInAnyPackage("io.dataclay.ds.ee..", "io.dataclay.ds.lm..", "io.dataclay.ds.peers..")
          .should().dependOnClassesThat().resideInAPackage("io.dataclay.ds.servicer..");

  /**
   * The logic knows neither the adapters that call it (servicer) or that it calls through its
   * ports (ee, lm, peers), nor gRPC and the generated protocol classes.
   */
  @ArchTest
  static final ArchRule featuresDoNotUseAdaptersOrTheWire =
      noClasses().that().resideInAnyPackage(FEATURES)
          .should().dependOnClassesThat().resideInAnyPackage("io.dataclay.ds.servicer..", "io.dataclay.ds.ee..",
              "io.dataclay.ds.lm..", "io.dataclay.ds.peers..", "io.dataclay.ds.codec..", "io.dataclay.proto..",
              "io.grpc..");

  /** The feature packages use the client library only where {@link #KNOWN_CLIENT_USES} says. */
  @ArchTest
  static void featuresDoNotUseTheClientLibrary(JavaClasses classes) {
    Set<String> found = new TreeSet<>();
    for (JavaClass type : classes) {
      if (!List.of(FEATURES).stream().anyMatch(p -> type.getPackageName().startsWith(p.replace("..", "")))) {
        continue;
      }
      for (Dependency d : type.getDirectDependenciesFromSelf()) {
        if (d.getTargetClass().getPackageName().startsWith("io.dataclay.client")) {
          found.add(topLevel(d.getOriginClass()) + " -> " + topLevel(d.getTargetClass()));
        }
      }
    }
    assertEquals(new TreeSet<>(KNOWN_CLIENT_USES), found,
        "feature packages' uses of io.dataclay.client (none may be added; remove a known one once it goes)");
  }

  private static String topLevel(JavaClass type) {
    return type.getName().replaceFirst("\\$.*", "");
  }
}
