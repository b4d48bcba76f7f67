package io.dataclay.serialization;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import io.dataclay.api.DataClayObject;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.SerializationException;
import java.lang.reflect.Field;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Java serialiser (Kryo 5): encodes a value, or each persistent field of a model object
 * separately, with model objects inside written as references (their IDs, listed beside the
 * value) and only classes of its {@link ClassPolicy} accepted. Thread-safe.
 */
public final class ObjectCodec {
  private static final int INITIAL_BUFFER = 256;

  private final Pool<CodecKryo> pool;

  /** A codec accepting the classes of {@code policy}. */
  public ObjectCodec(ClassPolicy policy) {
    this.pool = new Pool<>(true, false, 64) {
      @Override
      protected CodecKryo create() {
        return new CodecKryo(policy);
      }
    };
  }

  /** Encodes any allowed value (null included); model objects inside become references through {@code refs}. */
  public EncodedField encode(Object value, References refs) {
    CodecKryo kryo = pool.obtain();
    try {
      kryo.references = refs;
      kryo.log = new ReferenceLog();
      Output out = new Output(INITIAL_BUFFER, -1);
      kryo.writeClassAndObject(out, value);
      return new EncodedField(out.toBytes(), kryo.log.ids());
    } catch (KryoException | IllegalArgumentException | IllegalStateException e) {
      throw failure("could not encode a " + (value == null ? "null" : value.getClass().getName()), e);
    } finally {
      release(kryo);
    }
  }

  /**
   * Decodes a value written by {@link #encode}; references become objects through {@code refs}.
   *
   * @param what names the value in errors, e.g. "field Person.name"
   * @throws SerializationException when the bytes are malformed or name a class that is not allowed
   */
  public Object decode(byte[] data, References refs, String what) {
    if (data.length == 0) {
      throw new SerializationException(what + " is empty: expected an encoded Java value");
    }
    CodecKryo kryo = pool.obtain();
    try {
      kryo.references = refs;
      kryo.log = new ReferenceLog();
      BoundedInput in = new BoundedInput(data);
      Object value = kryo.readClassAndObject(in);
      if (in.position() != data.length) {
        throw new SerializationException(what + " has " + (data.length - in.position()) + " bytes after its value");
      }
      return value;
    } catch (RuntimeException e) {
      // malformed input surfaces as many exception types; none of them may escape as anything but this
      throw failure("could not decode " + what, e);
    } catch (StackOverflowError e) {
      throw new SerializationException("could not decode " + what + ": it nests values too deeply");
    } catch (OutOfMemoryError e) {
      // one oversized allocation failed before it was made: the value is refused, the server goes on
      throw new SerializationException("could not decode " + what + ": it needs more memory than this process has");
    } finally {
      release(kryo);
    }
  }

  /** Every persistent field of {@code obj}, each encoded on its own, by name in declaration order. */
  public Map<String, EncodedField> encodeFields(DataClayObject obj, References refs) {
    Map<String, EncodedField> out = new LinkedHashMap<>();
    for (Map.Entry<String, Field> f : ModelFields.of(obj.getClass()).entrySet()) {
      out.put(f.getKey(), encode(read(f.getValue(), obj), refs));
    }
    return out;
  }

  /** One persistent field of {@code obj}, encoded. */
  public EncodedField encodeField(DataClayObject obj, String name, References refs) {
    return encode(read(ModelFields.named(obj.getClass(), name), obj), refs);
  }

  /**
   * Sets the fields of {@code target} from their encoded values; names the class no longer has are
   * ignored, fields without a value keep theirs.
   */
  public void decodeFields(DataClayObject target, Map<String, byte[]> values, References refs) {
    Map<String, Field> fields = ModelFields.of(target.getClass());
    for (Map.Entry<String, byte[]> v : values.entrySet()) {
      Field f = fields.get(v.getKey());
      if (f != null) {
        write(f, target, decode(v.getValue(), refs, "field " + target.getClass().getName() + "." + v.getKey()));
      }
    }
  }

  /** Decodes {@code value} into field {@code name} of {@code target}. */
  public void decodeField(DataClayObject target, String name, byte[] value, References refs) {
    Field f = ModelFields.named(target.getClass(), name);
    write(f, target, decode(value, refs, "value of " + target.getClass().getName() + "." + name));
  }

  private static Object read(Field f, Object obj) {
    try {
      return f.get(obj);
    } catch (IllegalAccessException e) {
      throw new SerializationException("cannot read field " + f + ": " + e.getMessage());
    }
  }

  private static void write(Field f, Object obj, Object value) {
    try {
      f.set(obj, value);
    } catch (IllegalAccessException | IllegalArgumentException e) {
      throw new SerializationException("cannot set field " + f.getDeclaringClass().getName() + "." + f.getName()
          + " to a " + (value == null ? "null" : value.getClass().getName()) + ": " + e.getMessage());
    }
  }

  private void release(CodecKryo kryo) {
    kryo.references = null;
    kryo.log = null;
    pool.free(kryo);
  }

  private static DataClayException failure(String what, RuntimeException e) {
    if (e instanceof DataClayException d) {
      return d;
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      if (root instanceof DataClayException) {
        break;
      }
      root = root.getCause();
    }
    if (root instanceof DataClayException d) {
      return d;
    }
    return new SerializationException(what + ": " + e.getMessage());
  }
}
