package io.dataclay.enhance;

import io.dataclay.exceptions.InvalidArgumentException;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.pool.TypePool;

/**
 * Enhances one class file the way {@link DataClayPlugin} does at build time, for code that gets
 * model classes as bytes (a backend loading deployed models that were not enhanced).
 */
public final class ModelEnhancer {
  private static final DataClayPlugin PLUGIN = new DataClayPlugin();

  private ModelEnhancer() {}

  /**
   * The enhanced class file, or {@code classFile} itself when the class is not a model class or
   * already enhanced. {@code others} locates the classes it refers to (its superclasses).
   */
  public static byte[] enhance(String className, byte[] classFile, ClassFileLocator others) {
    ClassFileLocator locator = new ClassFileLocator.Compound(
        ClassFileLocator.Simple.of(className, classFile), others, ClassFileLocator.ForClassLoader.of(ModelEnhancer.class.getClassLoader()));
    TypePool pool = TypePool.Default.of(locator);
    TypePool.Resolution resolution = pool.describe(className);
    if (!resolution.isResolved()) {
      throw new InvalidArgumentException("class file of " + className + " cannot be read");
    }
    TypeDescription type = resolution.resolve();
    try {
      if (!PLUGIN.matches(type)) {
        return classFile;
      }
    } catch (IllegalStateException e) {
      // a superclass outside the model and the runtime: not a model class we can enhance
      return classFile;
    }
    return PLUGIN.apply(new ByteBuddy().redefine(type, locator), type, locator).make().getBytes();
  }
}
