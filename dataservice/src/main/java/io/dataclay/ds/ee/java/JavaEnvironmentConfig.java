package io.dataclay.ds.ee.java;

import io.dataclay.serialization.AllowList;
import java.util.Map;

/**
 * The Java execution environment's settings, read from the Data Service's environment.
 *
 * @param extraClasses DATACLAY_JAVA_ALLOW: comma-separated class names or package.* the serialiser
 *     accepts besides model classes and the safe JDK types (default: none)
 */
public record JavaEnvironmentConfig(AllowList extraClasses) {
  /** Comma-separated class names or package.* that Java values may also contain (default: none). */
  public static final String ALLOW = "DATACLAY_JAVA_ALLOW";

  /** The settings in {@code env} (unset keys take their defaults). */
  public static JavaEnvironmentConfig from(Map<String, String> env) {
    return new JavaEnvironmentConfig(AllowList.parse(env.get(ALLOW), ALLOW));
  }
}
