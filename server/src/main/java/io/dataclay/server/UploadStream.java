package io.dataclay.server;

import io.grpc.stub.StreamObserver;

/**
 * One client stream answered once, at its end (both servers' snapshot imports): each message is
 * taken as it arrives; the first failure answers the mapped error, abandons what was taken and
 * ignores the rest of the stream; a client that goes away abandons it too.
 *
 * @param <I> the messages the client streams
 * @param <O> the one answer
 */
public abstract class UploadStream<I, O> implements StreamObserver<I> {
  private final StreamObserver<O> out;
  private boolean failed;

  protected UploadStream(StreamObserver<O> out) {
    this.out = out;
  }

  /** Takes one message; what it throws fails the stream. */
  protected abstract void take(I message);

  /** The answer once the client sent everything; what it throws fails the stream. */
  protected abstract O answer();

  /** Releases what the stream took so far, when it failed or the client went away (by default nothing). */
  protected void abandon() {}

  @Override
  public final void onNext(I message) {
    if (failed) {
      return;
    }
    try {
      take(message);
    } catch (RuntimeException e) {
      fail(e);
    }
  }

  @Override
  public final void onError(Throwable t) {
    abandon();
  }

  @Override
  public final void onCompleted() {
    if (failed) {
      return;
    }
    try {
      out.onNext(answer());
      out.onCompleted();
    } catch (RuntimeException e) {
      fail(e); // also when the answer could not be sent: the client never learns of what was taken
    }
  }

  private void fail(RuntimeException e) {
    failed = true;
    abandon();
    Replies.fail(out, e);
  }
}
