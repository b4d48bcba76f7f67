package io.dataclay.ds.ee.java;

import com.google.protobuf.ByteString;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.Field;
import io.dataclay.proto.Language;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectHeader;
import io.dataclay.serialization.AllowList;
import io.dataclay.serialization.EncodedField;
import io.dataclay.serialization.ModelClassPolicy;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.TestPolicies;
import io.dataclay.serialization.TestReferences;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Test models as the Logic Module registers them, and a client-side codec for their values; the
 * references it hands out are persistent, and an ID it never gave out decodes to a proxy.
 */
final class JavaModels extends TestReferences {
  final ObjectCodec codec;

  JavaModels(Set<Class<?>> classes) {
    super(id -> new ObjectState(id, null, true), JavaModels::proxy);
    codec = new ObjectCodec(new ModelClassPolicy(TestPolicies.fixed(classes), AllowList.none(),
        JavaModels.class.getClassLoader()));
  }

  /** A Java model holding the class files of {@code classes}. */
  static Model model(String namespace, Class<?>... classes) {
    Model.Builder m = Model.newBuilder().setNamespace(namespace).setLanguage(Language.JAVA);
    for (Class<?> c : classes) {
      String path = c.getName().replace('.', '/') + ".class";
      m.addFiles(ModelFile.newBuilder().setPath(path).setContent(ByteString.copyFrom(classFile(c))));
      m.addClasses(ClassDescription.newBuilder().setName(c.getName()));
    }
    return m.build();
  }

  static byte[] classFile(Class<?> c) {
    try (InputStream in = c.getResourceAsStream("/" + c.getName().replace('.', '/') + ".class")) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The stored form of {@code obj} under a fresh ID (given to obj). */
  ObjectData objectData(DataClayObject obj) {
    UUID id = encode(obj);
    ObjectData.Builder d = ObjectData.newBuilder().setId(id.toString())
        .setHeader(ObjectHeader.newBuilder().setClassName(obj.getClass().getName())
            .setLanguage(Language.JAVA));
    for (Map.Entry<String, EncodedField> f : codec.encodeFields(obj, this).entrySet()) {
      Field.Builder fb = Field.newBuilder().setName(f.getKey()).setValue(ByteString.copyFrom(f.getValue().value()));
      f.getValue().references().forEach(r -> fb.addReferences(r.toString()));
      d.addFields(fb);
    }
    return d.build();
  }

  byte[] args(Object... args) {
    return codec.encode(args, this).value();
  }

  Object decode(byte[] data) {
    return codec.decode(data, this, "test value");
  }

  /** A proxy of {@code type} for the stored object {@code id} (test models have a (String, int) constructor). */
  private static DataClayObject proxy(Class<? extends DataClayObject> type, UUID id, UUID backend) {
    try {
      var ctor = type.getDeclaredConstructor(String.class, int.class);
      DataClayObject o = ctor.newInstance("proxy", 0);
      ObjectStates.set(o, new ObjectState(id, backend, true));
      return o;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
