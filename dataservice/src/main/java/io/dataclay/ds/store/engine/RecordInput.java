package io.dataclay.ds.store.engine;

/**
 * The bytes of one encoded record, wherever they are (a Java array, a block of persistent
 * memory), so the codec reads a record in place. Positions are record-relative; reading outside
 * {@code [0, length())} throws {@link IndexOutOfBoundsException}.
 */
public interface RecordInput {
  /** The record's length in bytes. */
  int length();

  /** The byte at {@code position}. */
  byte get(int position);

  /** Copies {@code length} bytes from {@code position} into {@code target} at {@code targetOffset}. */
  void copyTo(int position, byte[] target, int targetOffset, int length);

  /** A record held in an array (not copied). */
  static RecordInput of(byte[] record) {
    return new ArrayRecordInput(record);
  }
}
