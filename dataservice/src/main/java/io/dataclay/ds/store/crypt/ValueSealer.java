package io.dataclay.ds.store.crypt;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.StoredObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * What a store engine does to field values on their way into its pool and out of it: nothing
 * ({@link #PLAIN}), or encrypt each value on its own ({@link #encrypting}). Only values change;
 * IDs, headers, field names and references stay readable, because engines and garbage collection
 * work with them without the key. Each value is sealed separately, so a delta stays a delta (the
 * heap engine still writes one changed field in place) and a same-sized value stays same-sized.
 * A field or value that is missing is passed on as it is, for the engine's checks to refuse.
 */
public interface ValueSealer {
  /** Leaves values as they are: a store without encryption. */
  ValueSealer PLAIN = new ValueSealer() {
    @Override
    public boolean encrypts() {
      return false;
    }

    @Override
    public StoredObject seal(StoredObject object) {
      return object;
    }

    @Override
    public ObjectDelta seal(ObjectDelta delta) {
      return delta;
    }

    @Override
    public StoredObject open(StoredObject stored) {
      return stored;
    }
  };

  /** Whether values are encrypted (what `dataclay status` shows). */
  boolean encrypts();

  /** {@code object} as the pool keeps it. */
  StoredObject seal(StoredObject object);

  /** {@code delta} with its changed values as the pool keeps them. */
  ObjectDelta seal(ObjectDelta delta);

  /**
   * The object whose pool form is {@code stored}.
   *
   * @throws io.dataclay.exceptions.InternalException when a value fails decryption
   */
  StoredObject open(StoredObject stored);

  /** Encrypts every value with {@code cipher}, bound to its object and field. */
  static ValueSealer encrypting(FieldCipher cipher) {
    return new ValueSealer() {
      @Override
      public boolean encrypts() {
        return true;
      }

      @Override
      public StoredObject seal(StoredObject object) {
        return object == null ? null : new StoredObject(object.id(), object.header(),
            transform(object.id(), object.fields(), StoredObject.newFields(object.fields().size()), true));
      }

      @Override
      public ObjectDelta seal(ObjectDelta delta) {
        return delta == null ? null : new ObjectDelta(delta.id(),
            transform(delta.id(), delta.changed(), new LinkedHashMap<>(), true), delta.removed());
      }

      @Override
      public StoredObject open(StoredObject stored) {
        return new StoredObject(stored.id(), stored.header(),
            transform(stored.id(), stored.fields(), StoredObject.newFields(stored.fields().size()), false));
      }

      private Map<String, FieldValue> transform(UUID id, Map<String, FieldValue> from, Map<String, FieldValue> to,
          boolean seal) {
        for (Map.Entry<String, FieldValue> e : from.entrySet()) {
          FieldValue f = e.getValue();
          if (e.getKey() == null || f == null) {
            to.put(e.getKey(), f);
          } else {
            byte[] value = seal ? cipher.seal(id, e.getKey(), f.value()) : cipher.open(id, e.getKey(), f.value());
            to.put(e.getKey(), new FieldValue(value, f.references()));
          }
        }
        return to;
      }
    };
  }
}
