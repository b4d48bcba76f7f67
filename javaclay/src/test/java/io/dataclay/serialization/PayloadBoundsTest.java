package io.dataclay.serialization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.SerializationException;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Crafted payloads that claim more elements or bytes than they carry are refused before the
 * decoder allocates anything: a few bytes must never make a server allocate gigabytes.
 */
@Timeout(30)
class PayloadBoundsTest {
  private static final int HUGE = Integer.MAX_VALUE - 8;
  private final ObjectCodec codec = TestPolicies.codec();
  private final TestReferences refs = new TestReferences();

  private byte[] encode(Object value) {
    return codec.encode(value, refs).value();
  }

  /**
   * The encoding of {@code one} cut where it first differs from {@code two} (a value one element
   * longer), followed by a huge count: a payload that claims {@link #HUGE} elements and holds none.
   */
  private byte[] claimingHuge(Object one, Object two, boolean flagged) {
    byte[] a = encode(one);
    byte[] b = encode(two);
    int at = 0;
    while (a[at] == b[at]) {
      at++;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(a, 0, at);
    long value = (long) HUGE + 1;
    if (flagged) {
      // Kryo's flagged varint: flag 0x80, more 0x40, then six bits; then plain 7-bit groups
      out.write((int) (0x80 | 0x40 | (value & 0x3F)));
      value >>>= 6;
    }
    while (true) {
      if ((value & ~0x7FL) == 0) {
        out.write((int) value);
        break;
      }
      out.write((int) ((value & 0x7F) | 0x80));
      value >>>= 7;
    }
    return out.toByteArray();
  }

  @Test
  void arrays_collections_maps_and_strings_claiming_more_than_they_hold_are_refused() {
    Map<String, byte[]> crafted = new LinkedHashMap<>();
    crafted.put("byte[]", claimingHuge(new byte[] {1}, new byte[] {1, 2}, false));
    crafted.put("int[]", claimingHuge(new int[] {1}, new int[] {1, 2}, false));
    crafted.put("long[]", claimingHuge(new long[] {1}, new long[] {1, 2}, false));
    crafted.put("Object[]", claimingHuge(new Object[] {1}, new Object[] {1, 2}, false));
    crafted.put("String[]", claimingHuge(new String[] {"a"}, new String[] {"a", "b"}, false));
    crafted.put("ArrayList", claimingHuge(new ArrayList<>(List.of(1)), new ArrayList<>(List.of(1, 2)), false));
    crafted.put("HashSet", claimingHuge(new HashSet<>(Set.of(1)), new HashSet<>(Set.of(1, 2)), false));
    crafted.put("HashMap", claimingHuge(new HashMap<>(Map.of(1, 1)), new HashMap<>(Map.of(1, 1, 2, 2)), false));
    crafted.put("List.of", claimingHuge(List.of(1, 2, 3), List.of(1, 2, 3, 4), false));
    crafted.put("Map.of", claimingHuge(Map.of(1, 1, 2, 2), Map.of(1, 1, 2, 2, 3, 3), false));
    crafted.put("String", claimingHuge("\u00e9", "\u00e9\u00e9", true));
    BitSet small = new BitSet();
    small.set(1);
    BitSet large = new BitSet();
    large.set(100);
    crafted.put("BitSet", claimingHuge(small, large, false));
    long heapBefore = usedHeap();
    crafted.forEach((what, payload) -> {
      // run
      SerializationException e = assertThrows(SerializationException.class,
          () -> codec.decode(payload, refs, "crafted " + what), what);
      // verify
      assertTrue(e.getMessage().contains("claims") || e.getMessage().contains("holds only"), what + ": "
          + e.getMessage());
      assertTrue(payload.length < 100, what + " payload is " + payload.length + " bytes");
    });
    assertTrue(usedHeap() - heapBefore < 256L << 20, "decoding grew the heap by " + (usedHeap() - heapBefore));
  }

  @Test
  void values_of_every_bounded_kind_still_round_trip() {
    List<Object> values = List.of(new ArrayList<>(List.of(1, "two")), new HashSet<>(Set.of(3)),
        new HashMap<>(Map.of("k", 4)), List.of(5, 6), Set.of(7), Map.of("m", 8), "\u00e9t\u00e9",
        new ArrayList<>());
    for (Object v : values) {
      assertEquals(v, codec.decode(encode(v), refs, "value"));
    }
    assertTrue(Arrays.equals(new String[] {"a", null}, (String[]) codec.decode(encode(new String[] {"a", null}),
        refs, "value")));
    assertEquals(List.of(5, 6).getClass(), codec.decode(encode(List.of(5, 6)), refs, "value").getClass());
  }

  @Test
  void a_value_nested_too_deeply_is_a_serialization_error_not_a_stack_overflow() {
    // setup: a chain of 200,000 single-element lists
    byte[] one = encode(new ArrayList<>(List.of(1)));
    byte[] prefix = Arrays.copyOf(one, one.length - 2); // the list header, without its single element
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < 200_000; i++) {
      out.write(prefix, 0, prefix.length);
    }
    out.write(one, one.length - 2, 2);
    // run
    SerializationException e = assertThrows(SerializationException.class,
        () -> codec.decode(out.toByteArray(), refs, "deep value"));
    // verify
    assertTrue(e.getMessage().contains("deep value"), e.getMessage());
  }

  private static long usedHeap() {
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }
}
