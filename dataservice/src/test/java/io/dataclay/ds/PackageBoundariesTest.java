package io.dataclay.ds;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

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

  /** The core does not depend on the client library: its server-side needs come through its ports. */
  @ArchTest
  static final ArchRule featuresDoNotUseTheClientLibrary =
      noClasses().that().resideInAnyPackage(FEATURES)
          .should().dependOnClassesThat().resideInAnyPackage("io.dataclay.client..", "io.dataclay.runtime..",
              "io.dataclay.api..");
}
