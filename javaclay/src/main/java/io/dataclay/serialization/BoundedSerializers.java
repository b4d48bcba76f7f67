package io.dataclay.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.serializers.CollectionSerializer;
import com.esotericsoftware.kryo.serializers.DefaultArraySerializers;
import com.esotericsoftware.kryo.serializers.MapSerializer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kryo's serializers of arrays, collections and maps, each refusing a claimed size the payload
 * cannot hold before it allocates (see {@link BoundedInput}); same wire format as Kryo's own.
 */
final class BoundedSerializers {
  private BoundedSerializers() {}

  /** The bounded version of {@code serializer} (the default of {@code type}), or it unchanged when nothing is preallocated. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static Serializer bound(Kryo kryo, Class type, Serializer serializer) {
    Class<?> c = serializer.getClass();
    if (c == CollectionSerializer.class) {
      return new Collections();
    }
    if (c == MapSerializer.class) {
      return new Maps();
    }
    if (c == DefaultArraySerializers.ObjectArraySerializer.class) {
      return new ObjectArrays(kryo, type);
    }
    if (c == DefaultArraySerializers.StringArraySerializer.class) {
      return new StringArrays();
    }
    String name = c.getName();
    if (name.endsWith("$JdkImmutableListSerializer")) {
      return new ImmutableLists();
    }
    if (name.endsWith("$JdkImmutableSetSerializer")) {
      return new ImmutableSets();
    }
    if (name.endsWith("$JdkImmutableMapSerializer")) {
      return new ImmutableMaps();
    }
    return serializer;
  }

  private static void claim(Input input, long count, String what) {
    if (!(input instanceof BoundedInput bounded)) {
      throw new KryoException("internal: decoding without a bounded input");
    }
    bounded.claim(count, 1, what);
  }

  /** Mutable collections (ArrayList, HashSet, ArrayDeque, ...). */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static final class Collections extends CollectionSerializer<Collection> {
    @Override
    protected Collection create(Kryo kryo, Input input, Class<? extends Collection> type, int size) {
      claim(input, size, type.getSimpleName());
      return super.create(kryo, input, type, size);
    }
  }

  /** Mutable maps (HashMap, LinkedHashMap, ...). */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static final class Maps extends MapSerializer<Map> {
    @Override
    protected Map create(Kryo kryo, Input input, Class<? extends Map> type, int size) {
      claim(input, size, type.getSimpleName());
      return super.create(kryo, input, type, size);
    }
  }

  /** Object arrays of any allowed element type. */
  static final class ObjectArrays extends DefaultArraySerializers.ObjectArraySerializer {
    ObjectArrays(Kryo kryo, Class<?> type) {
      super(kryo, type);
    }

    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    public Object[] read(Kryo kryo, Input input, Class type) {
      claim(input, ((BoundedInput) input).peekCount(), type.getComponentType().getSimpleName() + "[]");
      return super.read(kryo, input, type);
    }
  }

  /** String arrays. */
  static final class StringArrays extends DefaultArraySerializers.StringArraySerializer {
    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    public String[] read(Kryo kryo, Input input, Class type) {
      claim(input, ((BoundedInput) input).peekCount(), "String[]");
      return super.read(kryo, input, type);
    }
  }

  /** List.of(...) lists: no null elements, read into a list of the claimed size. */
  static final class ImmutableLists extends CollectionSerializer<List<Object>> {
    ImmutableLists() {
      setElementsCanBeNull(false);
    }

    @Override
    protected List<Object> create(Kryo kryo, Input input, Class<? extends List<Object>> type, int size) {
      claim(input, size, "List");
      return new ArrayList<>(size);
    }

    @Override
    public List<Object> read(Kryo kryo, Input input, Class<? extends List<Object>> type) {
      List<Object> read = super.read(kryo, input, type);
      return read == null ? null : List.copyOf(read);
    }
  }

  /** Set.of(...) sets. */
  static final class ImmutableSets extends CollectionSerializer<Set<Object>> {
    ImmutableSets() {
      setElementsCanBeNull(false);
    }

    @Override
    protected Set<Object> create(Kryo kryo, Input input, Class<? extends Set<Object>> type, int size) {
      claim(input, size, "Set");
      return new HashSet<>();
    }

    @Override
    public Set<Object> read(Kryo kryo, Input input, Class<? extends Set<Object>> type) {
      Set<Object> read = super.read(kryo, input, type);
      return read == null ? null : Set.copyOf(read);
    }
  }

  /** Map.of(...) maps. */
  static final class ImmutableMaps extends MapSerializer<Map<Object, Object>> {
    ImmutableMaps() {
      setKeysCanBeNull(false);
      setValuesCanBeNull(false);
    }

    @Override
    protected Map<Object, Object> create(Kryo kryo, Input input, Class<? extends Map<Object, Object>> type, int size) {
      claim(input, size, "Map");
      return new HashMap<>();
    }

    @Override
    public Map<Object, Object> read(Kryo kryo, Input input, Class<? extends Map<Object, Object>> type) {
      Map<Object, Object> read = super.read(kryo, input, type);
      return read == null ? null : Map.copyOf(read);
    }
  }
}
