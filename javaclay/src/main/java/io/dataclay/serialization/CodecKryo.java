package io.dataclay.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.serializers.DefaultSerializers;
import com.esotericsoftware.kryo.serializers.ImmutableCollectionsSerializers;
import com.esotericsoftware.kryo.util.DefaultInstantiatorStrategy;
import com.esotericsoftware.kryo.util.MapReferenceResolver;
import io.dataclay.api.DataClayObject;
import java.util.Arrays;
import java.util.BitSet;
import java.util.UUID;
import org.objenesis.strategy.StdInstantiatorStrategy;

/** One Kryo instance of a codec (not thread-safe: codecs pool them) and the references of the value in hand. */
final class CodecKryo extends Kryo {
  /** First registration number of {@link SafeTypes#NUMBERED}; below it are Kryo's own (primitives, String). */
  private static final int FIRST_NUMBER = 20;

  References references;
  ReferenceLog log;

  CodecKryo(ClassPolicy policy) {
    this(new AllowListClassResolver(policy));
  }

  private CodecKryo(AllowListClassResolver resolver) {
    super(resolver, new MapReferenceResolver());
    setRegistrationRequired(true);
    setReferences(true);
    // Model classes need no public no-arg constructor; a refused class never reaches this point.
    setInstantiatorStrategy(new DefaultInstantiatorStrategy(new StdInstantiatorStrategy()));
    ImmutableCollectionsSerializers.addDefaultSerializers(this);
    addDefaultSerializer(UUID.class, new DefaultSerializers.UUIDSerializer());
    addDefaultSerializer(BitSet.class, new DefaultSerializers.BitSetSerializer());
    addDefaultSerializer(Arrays.asList().getClass(), new DefaultSerializers.ArraysAsListSerializer());
    addDefaultSerializer(DataClayObject.class, new ObjectRefSerializer());
    int number = FIRST_NUMBER;
    for (Class<?> type : SafeTypes.NUMBERED) {
      register(new Registration(type, getDefaultSerializer(type), number++));
    }
    resolver.registerImplicitly();
  }

  // Every array, collection and map serializer refuses sizes its payload cannot hold.
  @Override
  @SuppressWarnings("rawtypes")
  public Serializer getDefaultSerializer(Class type) {
    return BoundedSerializers.bound(this, type, super.getDefaultSerializer(type));
  }
}
