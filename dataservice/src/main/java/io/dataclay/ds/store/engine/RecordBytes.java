package io.dataclay.ds.store.engine;

import java.nio.charset.StandardCharsets;

/**
 * Reads the primitive pieces of a record (varints, strings, big-endian numbers) from a range of a
 * {@link RecordInput}, and writes them into arrays. Reads past the range throw {@link IndexOutOfBoundsException}, which the
 * codec reports as a corrupt record; a length is checked against what remains before anything is
 * allocated for it, so a corrupt length cannot exhaust memory.
 */
final class RecordBytes {
  private final RecordInput bytes;
  private final int end;
  private int p;

  RecordBytes(RecordInput bytes, int start, int end) {
    if (start < 0 || end > bytes.length() || start > end) {
      throw new IndexOutOfBoundsException("range " + start + ".." + end + " of " + bytes.length());
    }
    this.bytes = bytes;
    this.p = start;
    this.end = end;
  }

  int position() {
    return p;
  }

  byte readByte() {
    require(1);
    return bytes.get(p++);
  }

  int varint() {
    int value = 0;
    for (int shift = 0; shift < 32; shift += 7) {
      byte b = readByte();
      value |= (b & 0x7f) << shift;
      if (b >= 0) {
        if (value < 0) {
          throw new IndexOutOfBoundsException("varint out of range");
        }
        return value;
      }
    }
    throw new IndexOutOfBoundsException("varint too long");
  }

  int int32() {
    return (int) bigEndian(4);
  }

  long longValue() {
    return bigEndian(8);
  }

  private long bigEndian(int n) {
    require(n);
    long v = 0;
    for (int i = 0; i < n; i++) {
      v = (v << 8) | (bytes.get(p + i) & 0xff);
    }
    p += n;
    return v;
  }

  byte[] bytes(int length) {
    require(length);
    byte[] out = new byte[length];
    bytes.copyTo(p, out, 0, length);
    p += length;
    return out;
  }

  String string() {
    return new String(bytes(varint()), StandardCharsets.UTF_8);
  }

  /** A string that is probably one of a few names seen before: reused from {@code cache} if so. */
  String name(NameCache cache) {
    int length = varint();
    require(length);
    String name = cache.find(bytes, p, length);
    if (name == null) {
      name = cache.add(bytes(length));
    } else {
      p += length;
    }
    return name;
  }

  String nullableString() {
    int lengthPlusOne = varint();
    return lengthPlusOne == 0 ? null : new String(bytes(lengthPlusOne - 1), StandardCharsets.UTF_8);
  }

  void skip(long length) {
    if (length < 0 || length > end - p) {
      throw new IndexOutOfBoundsException("length " + length + " past the end");
    }
    p += (int) length;
  }

  /** {@code count}, after checking that that many items of at least {@code minBytes} each fit. */
  int checkedCount(int count, int minBytes) {
    if (count < 0 || (long) count * minBytes > end - p) {
      throw new IndexOutOfBoundsException("count " + count + " cannot fit");
    }
    return count;
  }

  private void require(int length) {
    if (length < 0 || length > end - p) {
      throw new IndexOutOfBoundsException("length " + length + " past the end");
    }
  }

  static int varintSize(int value) {
    int n = 1;
    while ((value & ~0x7f) != 0) {
      value >>>= 7;
      n++;
    }
    return n;
  }

  static int putVarint(byte[] out, int p, int value) {
    while ((value & ~0x7f) != 0) {
      out[p++] = (byte) ((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out[p++] = (byte) value;
    return p;
  }

  static long stringSize(byte[] utf8) {
    return varintSize(utf8.length) + (long) utf8.length;
  }

  static long nullableStringSize(byte[] utf8) {
    return utf8 == null ? 1 : varintSize(utf8.length + 1) + (long) utf8.length;
  }

  static int putString(byte[] out, int p, byte[] utf8) {
    p = putVarint(out, p, utf8.length);
    System.arraycopy(utf8, 0, out, p, utf8.length);
    return p + utf8.length;
  }

  static int putNullableString(byte[] out, int p, byte[] utf8) {
    if (utf8 == null) {
      out[p] = 0;
      return p + 1;
    }
    p = putVarint(out, p, utf8.length + 1);
    System.arraycopy(utf8, 0, out, p, utf8.length);
    return p + utf8.length;
  }

  static void putInt(byte[] out, int p, int v) {
    out[p] = (byte) (v >>> 24);
    out[p + 1] = (byte) (v >>> 16);
    out[p + 2] = (byte) (v >>> 8);
    out[p + 3] = (byte) v;
  }

  static void putLong(byte[] out, int p, long v) {
    putInt(out, p, (int) (v >>> 32));
    putInt(out, p + 4, (int) v);
  }
}
