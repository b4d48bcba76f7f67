package io.dataclay.ds.store.engine;

import java.nio.charset.StandardCharsets;

/**
 * Field names repeat across every object of a class, so decoding reuses the String of a name seen
 * before instead of building (and later hashing) a new one. A small direct-mapped table: a slot
 * holds one name, a collision just replaces it. Racy by design and still safe: a slot is one
 * reference to an immutable entry.
 */
final class NameCache {
  private static final int SLOTS = 1024;
  private static final int MAX_NAME_BYTES = 64;

  private record Name(byte[] utf8, String text) {}

  private final Name[] slots = new Name[SLOTS];

  /** The cached name equal to {@code length} bytes at {@code position}, or null. */
  String find(RecordInput input, int position, int length) {
    if (length > MAX_NAME_BYTES) {
      return null;
    }
    Name name = slots[slot(input, position, length)];
    if (name == null || name.utf8().length != length) {
      return null;
    }
    for (int i = 0; i < length; i++) {
      if (name.utf8()[i] != input.get(position + i)) {
        return null;
      }
    }
    return name.text();
  }

  /** Decodes {@code utf8}, caches it when short, and returns it. */
  String add(byte[] utf8) {
    String text = new String(utf8, StandardCharsets.UTF_8);
    if (utf8.length <= MAX_NAME_BYTES) {
      slots[slot(RecordInput.of(utf8), 0, utf8.length)] = new Name(utf8, text);
    }
    return text;
  }

  private static int slot(RecordInput input, int position, int length) {
    int h = 0x811c9dc5;
    for (int i = 0; i < length; i++) {
      h = (h ^ input.get(position + i)) * 0x01000193;
    }
    return (h ^ (h >>> 15)) & (SLOTS - 1);
  }
}
