package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.ds.session.Session;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;

/** How the Java environment reaches objects stored on other backends, acting as the caller. */
interface RemoteObjects {
  /** Runs {@code method} on {@code target} in its backend with the caller's session; returns the decoded result. */
  Object callMethod(Session session, ObjectCodec codec, References refs, DataClayObject target, String method,
      Object[] args);

  /** Reads field {@code field} of {@code target} in its backend with the caller's session; returns it decoded. */
  Object getField(Session session, ObjectCodec codec, References refs, DataClayObject target, String field);

  /** Assigns field {@code field} of {@code target} in its backend with the caller's session. */
  void setField(Session session, ObjectCodec codec, References refs, DataClayObject target, String field,
      Object value);

  /** Closes connections to other backends. */
  void close();
}
