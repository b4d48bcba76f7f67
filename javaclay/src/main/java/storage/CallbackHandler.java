package storage;

/**
 * What COMPSs passes to {@link StorageItf#executeTask} to learn that a task ended: its
 * {@link #eventListener} is called once, from a thread of the storage interface.
 */
public abstract class CallbackHandler {
  /** A handler; subclasses override {@link #eventListener}. */
  public CallbackHandler() {}

  /** Called once when the task ended; {@link StorageItf#getResult} turns the event into the result. */
  protected void eventListener(CallbackEvent event) {
    // a handler that does not listen ignores the event
  }
}
