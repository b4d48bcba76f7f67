package io.dataclay.ds;

import com.google.protobuf.ByteString;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.Field;
import io.dataclay.proto.Language;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectDelta;
import io.dataclay.proto.ObjectHeader;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Protocol messages the tests send: objects of the test model, deltas, models. */
public final class TestObjects {
  /** The Python class the test model registers. */
  public static final String POINT = "shapes.Point";

  private TestObjects() {}

  /** A Point with one field {@code x} holding {@code value}. */
  public static ObjectData point(UUID id, String value) {
    return object(id, POINT, Language.PYTHON, "x", value);
  }

  /** An object of any class with one field. */
  public static ObjectData object(UUID id, String className, Language language, String field, String value) {
    return ObjectData.newBuilder()
        .setId(id.toString())
        .setHeader(ObjectHeader.newBuilder().setClassName(className).setLanguage(language).setDataset("ignored"))
        .addFields(Field.newBuilder().setName(field).setValue(bytes(value)))
        .build();
  }

  /** A delta setting {@code field} of {@code id} to {@code value}. */
  public static ObjectDelta delta(UUID id, String field, String value, long sequence) {
    return ObjectDelta.newBuilder().setId(id.toString()).setSequence(sequence)
        .addChangedFields(Field.newBuilder().setName(field).setValue(bytes(value))).build();
  }

  /** The test model: namespace "shapes", module shapes.py with class Point, at {@code version}. */
  public static Model shapesModel(String source) {
    return Model.newBuilder()
        .setNamespace("shapes")
        .setLanguage(Language.PYTHON)
        .addFiles(ModelFile.newBuilder().setPath("shapes.py").setContent(bytes(source)))
        .addClasses(ClassDescription.newBuilder().setName(POINT))
        .build();
  }

  /** UTF-8 bytes of a string. */
  public static ByteString bytes(String s) {
    return ByteString.copyFrom(s, StandardCharsets.UTF_8);
  }

  /** The string of a field value. */
  public static String text(ByteString b) {
    return b.toString(StandardCharsets.UTF_8);
  }
}
