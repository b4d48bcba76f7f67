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
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;

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
      return new ImmutableCollections<List<Object>>("List", ArrayList::new, List::copyOf);
    }
    if (name.endsWith("$JdkImmutableSetSerializer")) {
      return new ImmutableCollections<Set<Object>>("Set", size -> new HashSet<>(), Set::copyOf);
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

  /**
   * List.of(...) and Set.of(...) collections: no null elements, read into a {@code mutable} one of
   * the claimed size, then made {@code immutable}.
   */
  static final class ImmutableCollections<C extends Collection<Object>> extends CollectionSerializer<C> {
    private final String what;
    private final IntFunction<C> mutable;
    private final UnaryOperator<C> immutable;

    ImmutableCollections(String what, IntFunction<C> mutable, UnaryOperator<C> immutable) {
      this.what = what;
      this.mutable = mutable;
      this.immutable = immutable;
      setElementsCanBeNull(false);
    }

    @Override
    protected C create(Kryo kryo, Input input, Class<? extends C> type, int size) {
      claim(input, size, what);
      return mutable.apply(size);
    }

    @Override
    public C read(Kryo kryo, Input input, Class<? extends C> type) {
      C read = super.read(kryo, input, type);
      return read == null ? null : immutable.apply(read);
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
