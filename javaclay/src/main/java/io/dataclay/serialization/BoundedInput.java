package io.dataclay.serialization;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;

/**
 * Kryo input over a whole payload that refuses, before anything is allocated, a length the
 * payload claims beyond the bytes it still holds: every element of an array or collection and
 * every character of a string takes at least one byte, so a 10-byte payload cannot make the
 * decoder allocate a gigabyte.
 */
final class BoundedInput extends Input {
  BoundedInput(byte[] payload) {
    super(payload);
  }

  /** Throws unless {@code count} items of at least {@code bytesEach} bytes fit in what remains. */
  void claim(long count, int bytesEach, String what) {
    long remaining = (long) limit - position;
    if (count < 0 || count * bytesEach > remaining) {
      throw new KryoException(what + " claims " + count + " elements but the payload holds only " + remaining
          + " more bytes");
    }
  }

  @Override
  public byte[] readBytes(int length) {
    claim(length, 1, "a byte array");
    return super.readBytes(length);
  }

  @Override
  public int[] readInts(int length) {
    claim(length, 4, "an int array");
    return super.readInts(length);
  }

  @Override
  public int[] readInts(int length, boolean optimizePositive) {
    claim(length, varEncoding ? 1 : 4, "an int array");
    return super.readInts(length, optimizePositive);
  }

  @Override
  public long[] readLongs(int length) {
    claim(length, 8, "a long array");
    return super.readLongs(length);
  }

  @Override
  public long[] readLongs(int length, boolean optimizePositive) {
    claim(length, varEncoding ? 1 : 8, "a long array");
    return super.readLongs(length, optimizePositive);
  }

  @Override
  public float[] readFloats(int length) {
    claim(length, 4, "a float array");
    return super.readFloats(length);
  }

  @Override
  public double[] readDoubles(int length) {
    claim(length, 8, "a double array");
    return super.readDoubles(length);
  }

  @Override
  public short[] readShorts(int length) {
    claim(length, 2, "a short array");
    return super.readShorts(length);
  }

  @Override
  public char[] readChars(int length) {
    claim(length, 2, "a char array");
    return super.readChars(length);
  }

  @Override
  public boolean[] readBooleans(int length) {
    claim(length, 1, "a boolean array");
    return super.readBooleans(length);
  }

  @Override
  public String readString() {
    checkStringLength();
    return super.readString();
  }

  @Override
  public StringBuilder readStringBuilder() {
    checkStringLength();
    return super.readStringBuilder();
  }

  // A UTF-8 string starts with its character count + 1 (0: null) as a flagged varint; ASCII ones
  // are read up to their end marker and allocate nothing ahead.
  private void checkStringLength() {
    int start = position;
    if (position < limit && readVarIntFlag()) {
      int count = readVarIntFlag(true);
      position = start;
      if (count > 1) {
        claim(count - 1L, 1, "a string");
      }
    }
    position = start;
  }

  /** The element count of an array, collection or map written as count + 1 (0: null), without consuming it. */
  int peekCount() {
    int start = position;
    int countPlusOne = readVarInt(true);
    position = start;
    return countPlusOne - 1;
  }
}
