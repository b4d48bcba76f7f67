package io.dataclay.enhance;

import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isBridge;
import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.not;

import io.dataclay.api.DataClayObject;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.build.Plugin;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;

/**
 * The build-time enhancement of model classes (byte-buddy-maven-plugin): every non-private
 * instance method a {@link DataClayObject} subclass declares first checks whether the object is a
 * proxy, and if so runs in the object's backend instead. Classes already enhanced are left alone.
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

  /** Marks the class {@link Enhanced} and puts the remote-call advice on its methods. */
  @Override
  public DynamicType.Builder<?> apply(DynamicType.Builder<?> builder, TypeDescription target,
      ClassFileLocator locator) {
    return builder.implement(Enhanced.class)
        .visit(Advice.to(RemoteCallAdvice.class).on(isMethod()
            .and(isDeclaredBy(target))
            .and(not(isStatic())).and(not(isAbstract())).and(not(isNative()))
            .and(not(isPrivate())).and(not(isBridge())).and(not(isSynthetic()))));
  }

  /** Holds no resources. */
  @Override
  public void close() {}
}
