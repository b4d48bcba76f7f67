package io.dataclay.server;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/** Records what a call was answered; {@code gone} throws like a cancelled call's observer. */
final class Recorded<T> implements StreamObserver<T> {
  final List<T> values = new ArrayList<>();
  Throwable error;
  boolean completed;
  final boolean gone;

  Recorded(boolean gone) {
    this.gone = gone;
  }

  @Override
  public void onNext(T value) {
    if (gone) {
      throw Status.CANCELLED.asRuntimeException();
    }
    values.add(value);
  }

  @Override
  public void onError(Throwable t) {
    if (gone) {
      throw Status.CANCELLED.asRuntimeException();
    }
    error = t;
  }

  @Override
  public void onCompleted() {
    completed = true;
  }
}
