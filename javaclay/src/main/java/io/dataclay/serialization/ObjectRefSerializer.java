package io.dataclay.serialization;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.exceptions.SerializationException;
import java.util.UUID;

/** Writes a model object met inside a value as a reference: its ID and the backend it was last seen on. */
final class ObjectRefSerializer extends Serializer<DataClayObject> {
  @Override
  public void write(Kryo kryo, Output output, DataClayObject obj) {
    CodecKryo k = (CodecKryo) kryo;
    UUID id = k.references.encode(obj);
    ObjectState state = ObjectStates.of(obj);
    UUID backend = state == null ? null : state.backend();
    output.writeLong(id.getMostSignificantBits());
    output.writeLong(id.getLeastSignificantBits());
    output.writeBoolean(backend != null);
    if (backend != null) {
      output.writeLong(backend.getMostSignificantBits());
      output.writeLong(backend.getLeastSignificantBits());
    }
    k.log.add(id);
  }

  @Override
  @SuppressWarnings("unchecked")
  public DataClayObject read(Kryo kryo, Input input, Class<? extends DataClayObject> type) {
    UUID id = new UUID(input.readLong(), input.readLong());
    UUID backend = input.readBoolean() ? new UUID(input.readLong(), input.readLong()) : null;
    DataClayObject obj = ((CodecKryo) kryo).references.decode(type, id, backend);
    if (obj == null || !type.isInstance(obj)) {
      throw new SerializationException("reference to object " + id + " of class " + type.getName() + " could not be resolved");
    }
    return obj;
  }
}
