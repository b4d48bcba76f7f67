package io.dataclay.ds.ee;

import java.io.IOException;

/** A frame on the execution-environment link that breaks the protocol; the link is closed. */
public final class MalformedFrameException extends IOException {
  private static final long serialVersionUID = 1L;

  /** A violation described by {@code what}. */
  MalformedFrameException(String what) {
    super(what);
  }
}
