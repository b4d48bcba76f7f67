package io.dataclay.enhance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.RemoteFields;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import net.bytebuddy.dynamic.ClassFileLocator;
import org.junit.jupiter.api.Test;

/** What the enhancement adds to a model class, seen on a class enhanced the way a backend does it. */
class ModelEnhancerTest {
  private static final String NAME = FieldSample.class.getName();

  private static Class<?> enhanced() throws IOException, ClassNotFoundException {
    byte[] original;
    try (InputStream in = FieldSample.class.getResourceAsStream("FieldSample.class")) {
      original = in.readAllBytes();
    }
    byte[] bytes = ModelEnhancer.enhance(NAME, original, ClassFileLocator.ForClassLoader.of(FieldSample.class.getClassLoader()));
    ClassLoader loader = new ClassLoader(FieldSample.class.getClassLoader()) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (name.equals(NAME)) {
          synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            return c != null ? c : defineClass(name, bytes, 0, bytes.length);
          }
        }
        return super.loadClass(name, resolve);
      }
    };
    return loader.loadClass(NAME);
  }

  @Test
  void every_persistent_field_gets_a_reader_and_every_assignable_one_a_writer() throws Exception {
    // run
    Class<?> type = enhanced();
    Set<String> accessors = Arrays.stream(type.getDeclaredMethods()).map(Method::getName)
        .filter(n -> n.startsWith("$dc$")).collect(Collectors.toSet());
    // verify: name (final) is read only, total read and written, the transient and static fields have none
    assertTrue(Enhanced.class.isAssignableFrom(type));
    assertEquals(Set.of(RemoteFields.READER_PREFIX + "name", RemoteFields.READER_PREFIX + "total",
        RemoteFields.WRITER_PREFIX + "total"), accessors);
    Method reader = type.getDeclaredMethod(RemoteFields.READER_PREFIX + "total");
    assertSame(long.class, reader.getReturnType());
    assertTrue(Modifier.isPublic(reader.getModifiers()));
  }

  @Test
  void a_volatile_object_keeps_reading_and_assigning_its_fields_in_place() throws Exception {
    // setup
    Class<?> type = enhanced();
    Object a = type.getConstructor(String.class).newInstance("a");
    Object b = type.getConstructor(String.class).newInstance("b");
    type.getMethod("add", long.class).invoke(a, 2L);
    type.getMethod("add", long.class).invoke(b, 5L);
    // run
    Object total = type.getMethod("absorb", type).invoke(a, b);
    // verify
    assertEquals(7L, total);
    assertEquals(7L, type.getDeclaredMethod(RemoteFields.READER_PREFIX + "total").invoke(a));
    assertEquals("b", type.getMethod("getName").invoke(b));
  }
}
