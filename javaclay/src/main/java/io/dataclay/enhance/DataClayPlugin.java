package io.dataclay.enhance;

import static net.bytebuddy.matcher.ElementMatchers.is;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isBridge;
import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.isNative;
import static net.bytebuddy.matcher.ElementMatchers.isPrivate;
import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.isSynthetic;
import static net.bytebuddy.matcher.ElementMatchers.isTransient;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.RemoteFields;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.build.Plugin;
import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.field.FieldList;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.ParameterDescription;
import net.bytebuddy.description.modifier.Ownership;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.implementation.FieldAccessor;
import net.bytebuddy.implementation.MethodCall;

/**
 * The build-time enhancement of model classes (byte-buddy-maven-plugin): every non-private
 * instance method a {@link DataClayObject} subclass declares first checks whether the object is a
 * proxy, and if so runs in the object's backend instead; every model class gets its own static
 * {@code getByAlias(alias)} and {@code getByAlias(alias, dataset)} returning its own instances.
 *
 * <p>Fields: each persistent field the class declares gets a reader and a writer
 * ({@code $dc$get$name}, {@code $dc$set$name}) that read or assign it in the backend when the
 * object is a proxy, and every read and assignment of such a field in the class's methods
 * (constructors excepted) goes through them. So {@code other.balance} in a model method, with
 * {@code other} a persistent object of the same class, is the stored value, not a proxy's empty
 * field. Classes already enhanced are left alone.
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
    out = byAlias(out, target, String.class, String.class);
    return fieldAccessors(out, target);
  }

  // The persistent fields declared here (as ModelFields reads them), each with its reader and
  // writer, and their reads and writes in this class's methods rewritten to call those.
  private static DynamicType.Builder<?> fieldAccessors(DynamicType.Builder<?> builder, TypeDescription target) {
    FieldList<FieldDescription.InDefinedShape> fields = target.getDeclaredFields()
        .filter(not(isStatic()).and(not(isTransient())).and(not(isSynthetic())));
    if (fields.isEmpty()) {
      return builder;
    }
    MemberSubstitution substitution = MemberSubstitution.strict();
    for (FieldDescription.InDefinedShape f : fields) {
      TypeDescription.Generic type = f.getType().asErasure().asGenericType();
      String reader = RemoteFields.READER_PREFIX + f.getName();
      builder = builder.defineMethod(reader, type, Visibility.PUBLIC)
          .intercept(Advice.to(FieldReadAdvice.class).wrap(FieldAccessor.ofField(f.getName())));
      substitution = substitution.field(is(f)).onRead().replaceWith(accessor(target, reader, type, List.of()));
      if (!f.isFinal()) { // a final field is only assigned in constructors, which keep their plain access
        String writer = RemoteFields.WRITER_PREFIX + f.getName();
        builder = builder.defineMethod(writer, TypeDescription.Generic.VOID, Visibility.PUBLIC)
            .withParameters(type)
            .intercept(Advice.to(FieldWriteAdvice.class).wrap(FieldAccessor.ofField(f.getName())));
        substitution = substitution.field(is(f)).onWrite()
            .replaceWith(accessor(target, writer, TypeDescription.Generic.VOID, List.of(type)));
      }
    }
    return builder.visit(substitution.on(isMethod().and(not(nameStartsWith("$dc$")))));
  }

  private static MethodDescription accessor(TypeDescription owner, String name, TypeDescription.Generic returned,
      List<TypeDescription.Generic> parameters) {
    List<ParameterDescription.Token> tokens = new ArrayList<>();
    for (TypeDescription.Generic p : parameters) {
      tokens.add(new ParameterDescription.Token(p));
    }
    return new MethodDescription.Latent(owner, name, Modifier.PUBLIC, List.of(), returned, tokens, List.of(),
        List.of(), null, null);
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
