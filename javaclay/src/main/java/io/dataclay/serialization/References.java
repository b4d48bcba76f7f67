package io.dataclay.serialization;

import io.dataclay.api.DataClayObject;
import java.util.UUID;

/**
 * How model objects met inside a value are written and read: as references (their IDs), never
 * by value. The client and the execution environment decide what an ID means for them.
 */
public interface References {
  /**
   * The ID to write for {@code obj}. An object that is not persistent yet gets an ID here and is
   * remembered by the caller (to be stored with the value), or refused with an exception.
   */
  UUID encode(DataClayObject obj);

  /** The object to put where a reference to {@code id} (a {@code type}, master last seen on {@code backend}) was written. */
  DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID backend);
}
