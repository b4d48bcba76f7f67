package storage;

/** The outcome of a task run by {@link StorageItf#executeTask}: its request ID, success or failure, and the result or the error. */
public class CallbackEvent {
  /** How a task ended. */
  public enum EventType {
    /** The task failed: the content is the exception it raised. */
    FAIL,
    /** The task ran: the content is its result (null for a void method). */
    SUCCESS
  }

  private String requestID;
  private EventType type;
  private Object content;

  /** An event to be filled with the setters. */
  public CallbackEvent() {}

  /** The event of request {@code requestID}, ended as {@code type}, with its result or error. */
  public CallbackEvent(String requestID, EventType type, Object content) {
    setRequestID(requestID);
    setType(type);
    setContent(content);
  }

  /** The ID {@link StorageItf#executeTask} returned for the task. */
  public String getRequestID() {
    return requestID;
  }

  /** Sets the request ID; it must not be null. */
  public void setRequestID(String requestID) {
    if (requestID == null) {
      throw new IllegalArgumentException("requestID is null");
    }
    this.requestID = requestID;
  }

  /** How the task ended. */
  public EventType getType() {
    return type;
  }

  /** Sets how the task ended; it must not be null. */
  public void setType(EventType type) {
    if (type == null) {
      throw new IllegalArgumentException("type is null");
    }
    this.type = type;
  }

  /** The task's result (SUCCESS) or the exception it raised (FAIL). */
  public Object getContent() {
    return content;
  }

  /** Sets the result or the exception. */
  public void setContent(Object content) {
    this.content = content;
  }

  @Override
  public String toString() {
    return "CallbackEvent(" + requestID + ", " + type + ")";
  }
}
