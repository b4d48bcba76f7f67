package io.dataclay.enhance;

import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isBridge;
import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import io.dataclay.api.DataClayObject;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.build.Plugin;
import net.bytebuddy.description.modifier.Ownership;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.MethodCall;

/**
 * The build-time enhancement of model classes (byte-buddy-maven-plugin): every non-private
 * instance method a {@link DataClayObject} subclass declares first checks whether the object is a
 * proxy, and if so runs in the object's backend instead; every model class gets its own static
 * {@code getByAlias(alias)} and {@code getByAlias(alias, dataset)} returning its own instances.
 * Classes already enhanced are left alone.
 */
public final class DataClayPlugin implements Plugin {
  /** Model classes (DataClayObject subclasses) not enhanced yet. */
  @Override
  public boolean matches(TypeDescription target) {
    return !target.isInterface()
        && target.isAssignableTo(DataClayObject.class)
        && !target.represents(DataClayObject.class)
        && !target.isAssignableTo(Enhanced.class);
  }

  /** Marks the class {@link Enhanced}, puts the remote-call advice on its methods and adds its getByAlias. */
  @Override
  public DynamicType.Builder<?> apply(DynamicType.Builder<?> builder, TypeDescription target,
      ClassFileLocator locator) {
    DynamicType.Builder<?> out = builder.implement(Enhanced.class)
        .visit(Advice.to(RemoteCallAdvice.class).on(isMethod()
            .and(isDeclaredBy(target))
            .and(not(isStatic())).and(not(isAbstract())).and(not(isNative()))
            .and(not(isPrivate())).and(not(isBridge())).and(not(isSynthetic()))));
    out = byAlias(out, target, String.class);
    return byAlias(out, target, String.class, String.class);
  }

  // Person.getByAlias(alias) compiles against DataClayObject's generic static method, but the call
  // names Person: the JVM finds this method first, with the same erased descriptor, and it passes
  // Person.class on. A class declaring its own getByAlias of that shape keeps it.
  private static DynamicType.Builder<?> byAlias(DynamicType.Builder<?> builder, TypeDescription target,
      Class<?>... parameters) {
    if (!target.getDeclaredMethods().filter(named("getByAlias").and(takesArguments(parameters))).isEmpty()) {
      return builder;
    }
    Class<?>[] withType = new Class<?>[parameters.length + 1];
    withType[0] = Class.class;
    System.arraycopy(parameters, 0, withType, 1, parameters.length);
    try {
      // generic like the inherited method, so code compiled against enhanced classes infers its type too
      return builder.defineMethod("getByAlias", TypeDescription.Generic.Builder.typeVariable("T").build(),
              Visibility.PUBLIC, Ownership.STATIC)
          .withParameters(parameters)
          .typeVariable("T", DataClayObject.class)
          .intercept(MethodCall.invoke(DataClayObject.class.getMethod("getByAlias", withType))
              .with(target).withAllArguments());
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("DataClayObject has no getByAlias of " + withType.length + " parameters", e);
    }
  }

  /** Holds no resources. */
  @Override
  public void close() {}
}
