package io.dataclay;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * javaclay's package boundaries, checked on its main classes so that a new dependency that
 * breaks one fails the build.
 */
@AnalyzeClasses(packages = {"io.dataclay", "storage"}, importOptions = ImportOption.DoNotIncludeTests.class)
class PackageBoundariesTest {
  /**
   * Only the wrappers around the generated stubs (client) and the transport with its error
   * mapping (rpc) use the generated protocol classes: the API, the runtime, serialisation and
   * the COMPSs storage API see plain records.
   */
  @ArchTest
  static final ArchRule onlyClientAndRpcUseTheWire =
      noClasses().that().resideOutsideOfPackages("io.dataclay.client..", "io.dataclay.rpc..", "io.dataclay.proto..")
          .should().dependOnClassesThat().resideInAPackage("io.dataclay.proto..");

  /** No two packages of the library depend on each other, directly or not. */
  @ArchTest
  static final ArchRule packagesAreFreeOfCycles =
      slices().matching("io.dataclay.(*)..").should().beFreeOfCycles();
}
