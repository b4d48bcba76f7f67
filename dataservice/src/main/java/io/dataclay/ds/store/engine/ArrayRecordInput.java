package io.dataclay.ds.store.engine;

/** A record held in a Java array. */
final class ArrayRecordInput implements RecordInput {
  private final byte[] record;

  ArrayRecordInput(byte[] record) {
    this.record = record;
  }

  @Override
  public int length() {
    return record.length;
  }

  @Override
  public byte get(int position) {
    return record[position];
  }

  @Override
  public void copyTo(int position, byte[] target, int targetOffset, int length) {
    System.arraycopy(record, position, target, targetOffset, length);
  }
}
