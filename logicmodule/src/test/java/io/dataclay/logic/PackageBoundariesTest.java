package io.dataclay.logic;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Arrays;

/**
 * The Logic Module's package boundaries (docs/internals.md, "Logic Module packages"), checked on
 * its main classes so that a new dependency that breaks one fails the build.
 */
@AnalyzeClasses(packages = "io.dataclay.logic", importOptions = ImportOption.DoNotIncludeTests.class)
class PackageBoundariesTest {
  /** The adapters: incoming gRPC, outgoing gRPC, and the converters both use. */
  private static final String[] ADAPTERS = {
      "io.dataclay.logic.servicer..", "io.dataclay.logic.outgoing..", "io.dataclay.logic.codec.."};

  /** The feature packages: the Logic Module's logic and its database, in plain types. */
  private static final String[] FEATURES = {
      "io.dataclay.logic.service..", "io.dataclay.logic.accounts..", "io.dataclay.logic.backends..",
      "io.dataclay.logic.models..", "io.dataclay.logic.objects..", "io.dataclay.logic.listing..",
      "io.dataclay.logic.collection..", "io.dataclay.logic.snapshot..", "io.dataclay.logic.failover..",
      "io.dataclay.logic.checks..", "io.dataclay.logic.metadata..", "io.dataclay.logic.events.."};

  /** Only the adapters use the generated protocol classes. */
  @ArchTest
  static final ArchRule onlyAdaptersUseTheWire =
      noClasses().that().resideOutsideOfPackages(ADAPTERS)
          .should().dependOnClassesThat().resideInAPackage("io.dataclay.proto..");

  /** No two packages of the Logic Module depend on each other, directly or not. */
  @ArchTest
  static final ArchRule packagesAreFreeOfCycles =
      slices().matching("io.dataclay.logic.(*)..").should().beFreeOfCycles();

  /**
   * The logic knows neither the adapters that call it (servicer) or that it calls through its
   * port (outgoing, behind backends.BackendCalls), nor gRPC, the client library or its transport.
   */
  @ArchTest
  static final ArchRule featuresDoNotUseAdaptersOrTheWire =
      noClasses().that().resideInAnyPackage(FEATURES)
          .should().dependOnClassesThat().resideInAnyPackage("io.dataclay.logic.servicer..",
              "io.dataclay.logic.outgoing..", "io.dataclay.logic.codec..", "io.dataclay.proto..", "io.grpc..",
              "io.dataclay.client..", "io.dataclay.rpc..");

  /** Every class of the Logic Module sits in a package these rules name, or in its root. */
  @ArchTest
  static final ArchRule everyPackageIsNamedHere =
      classes()
          .should().resideInAnyPackage(concat(new String[] {"io.dataclay.logic"}, ADAPTERS, FEATURES));

  private static String[] concat(String[]... parts) {
    return Arrays.stream(parts).flatMap(Arrays::stream).toArray(String[]::new);
  }
}
