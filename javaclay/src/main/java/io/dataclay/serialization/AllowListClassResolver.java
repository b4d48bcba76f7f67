package io.dataclay.serialization;

import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.util.DefaultClassResolver;
import io.dataclay.exceptions.SerializationException;

/**
 * Kryo's class resolver with registration required: a class is registered (written by name) the
 * first time it is met only if the policy allows it; a name read from a payload is checked by the
 * policy before any class is looked up, so a refused name loads and creates nothing.
 */
final class AllowListClassResolver extends DefaultClassResolver {
  private final ClassPolicy policy;
  private boolean implicit;

  AllowListClassResolver(ClassPolicy policy) {
    this.policy = policy;
  }

  @Override
  public Registration getRegistration(Class type) {
    Registration r = super.getRegistration(type);
    if (r != null || !implicit) {
      return r;
    }
    if (!policy.allows(type)) {
      throw new SerializationException("class " + type.getName() + " is not allowed in dataClay values: it is "
          + "not a model class, not a safe JDK type and not listed in DATACLAY_JAVA_ALLOW");
    }
    return registerImplicit(type);
  }

  /** From now on, allowed classes met for the first time are registered (Kryo's own set-up has run). */
  void registerImplicitly() {
    implicit = true;
  }

  // Kryo keeps class-name IDs across values when registration is required (it assumes no class is
  // written by name); here model classes are, and every value must decode on its own.
  @Override
  public void reset() {
    super.reset();
    if (classToNameId != null) {
      classToNameId.clear(64);
    }
    if (nameIdToClass != null) {
      nameIdToClass.clear();
    }
    nextNameId = 0;
  }

  @Override
  protected Class<?> getTypeByName(String className) {
    Class<?> known = super.getTypeByName(className);
    if (known != null) {
      return known;
    }
    Class<?> type = policy.resolve(className);
    if (type == null) {
      throw new SerializationException("the value names class " + abbreviate(className) + ", which is not allowed "
          + "here (not a registered model class, not a safe JDK type, not in DATACLAY_JAVA_ALLOW); nothing was created");
    }
    return type;
  }

  private static String abbreviate(String name) {
    return name.length() <= 200 ? name : name.substring(0, 200) + "...";
  }
}
