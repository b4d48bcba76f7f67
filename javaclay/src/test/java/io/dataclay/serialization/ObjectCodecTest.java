package io.dataclay.serialization;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.ObjectStates;
import io.dataclay.exceptions.SerializationException;
import java.io.File;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ObjectCodecTest {
  private final ObjectCodec codec = TestPolicies.codec();
  private final TestReferences refs = new TestReferences();

  private Object roundTrip(Object value) {
    return codec.decode(codec.encode(value, refs).value(), refs, "test value");
  }

  @Test
  void fieldsAreEncodedOneByOneByNameAndTransientFieldsAreLeftOut() {
    // setup
    Person p = new Person("ada", 36);
    // run
    Map<String, EncodedField> fields = codec.encodeFields(p, refs);
    Person copy = new Person("", 0);
    Map<String, byte[]> values = new LinkedHashMap<>();
    fields.forEach((k, v) -> values.put(k, v.value()));
    codec.decodeFields(copy, values, refs);
    // verify
    assertEquals(List.of("name", "age", "partner", "friends"), List.copyOf(fields.keySet()));
    assertEquals("ada", copy.name);
    assertEquals(36, copy.age);
    assertNull(copy.partner);
  }

  @Test
  void modelObjectsInsideAValueAreWrittenAsReferencesAndListed() {
    // setup
    Person a = new Person("a", 1);
    Person b = new Person("b", 2);
    Person c = new Person("c", 3);
    a.partner = b;
    a.friends = new ArrayList<>(List.of(b, c));
    // run
    Map<String, EncodedField> fields = codec.encodeFields(a, refs);
    // verify
    assertEquals(List.of(b.getObjectId()), fields.get("partner").references());
    assertEquals(List.of(b.getObjectId(), c.getObjectId()), fields.get("friends").references());
    assertTrue(fields.get("name").references().isEmpty());
    assertFalse(ObjectStates.isProxy(b));
    assertTrue(fields.get("friends").value().length < 120, "references, not copies of b and c");
  }

  @Test
  void cyclesBetweenModelObjectsRoundTripThroughTheirIds() {
    // setup
    Person a = new Person("a", 1);
    Person b = new Person("b", 2);
    a.partner = b;
    b.partner = a;
    // run
    EncodedField ofA = codec.encodeField(a, "partner", refs);
    EncodedField ofB = codec.encodeField(b, "partner", refs);
    Object partnerOfA = codec.decode(ofA.value(), refs, "a.partner");
    Object partnerOfB = codec.decode(ofB.value(), refs, "b.partner");
    // verify
    assertSame(b, partnerOfA);
    assertSame(a, partnerOfB);
  }

  @Test
  void valuesWrittenOneAfterAnotherDecodeOnTheirOwnElsewhere() {
    // setup: the same pooled writer encodes model classes in two values
    Person a = new Person("a", 1);
    Person b = new Person("b", 2);
    byte[] first = codec.encode(List.of(a), refs).value();
    byte[] second = codec.encode(List.of(b), refs).value();
    ObjectCodec elsewhere = TestPolicies.codec();
    // run
    Object decodedSecond = elsewhere.decode(second, refs, "second");
    Object decodedFirst = elsewhere.decode(first, refs, "first");
    // verify
    assertEquals(List.of(b), decodedSecond);
    assertEquals(List.of(a), decodedFirst);
  }

  @Test
  void sharedAndSelfReferencingContainersKeepTheirIdentityInsideOneValue() {
    // setup
    List<Object> shared = new ArrayList<>(List.of("x"));
    List<Object> outer = new ArrayList<>();
    outer.add(shared);
    outer.add(shared);
    outer.add(outer);
    // run
    @SuppressWarnings("unchecked")
    List<Object> copy = (List<Object>) roundTrip(outer);
    // verify
    assertSame(copy.get(0), copy.get(1));
    assertSame(copy, copy.get(2));
    assertEquals(List.of("x"), copy.get(0));
  }

  @Test
  void collectionsMapsAndJdkValuesRoundTrip() {
    // setup
    Map<String, Object> value = new HashMap<>();
    value.put("list", new ArrayList<>(List.of(1, 2L, 3.5, "four")));
    value.put("immutable", List.of("a", "b", "c"));
    value.put("set", Set.of(1, 2, 3));
    value.put("map", Map.of("k", "v"));
    value.put("sorted", new TreeMap<>(Map.of("b", 2, "a", 1)));
    value.put("uuid", UUID.randomUUID());
    value.put("decimal", new BigDecimal("12.3400"));
    value.put("when", Instant.ofEpochSecond(1_700_000_000L, 5));
    value.put("day", LocalDate.of(2024, 2, 29));
    value.put("asList", Arrays.asList(1, 2));
    value.put("singleton", Collections.singletonList("s"));
    value.put("zone", ZoneId.of("Europe/Madrid"));
    value.put("bits", BitSet.valueOf(new long[] {5L}));
    // run
    Object copy = roundTrip(value);
    // verify
    assertEquals(value, copy);
  }

  @Test
  void arraysAndNullRoundTrip() {
    // setup
    Object[] mixed = {null, new int[] {1, 2}, new String[] {"a", null}, new double[][] {{1.5}}};
    // run
    Object[] copy = (Object[]) roundTrip(mixed);
    // verify
    assertNull(roundTrip(null));
    assertNull(copy[0]);
    assertArrayEquals((int[]) mixed[1], (int[]) copy[1]);
    assertArrayEquals((String[]) mixed[2], (String[]) copy[2]);
    assertArrayEquals(((double[][]) mixed[3])[0], ((double[][]) copy[3])[0]);
  }

  @Test
  void largeByteArraysRoundTripIntact() {
    // setup
    byte[] big = new byte[16 << 20];
    new Random(42).nextBytes(big);
    // run
    EncodedField encoded = codec.encode(big, refs);
    byte[] copy = (byte[]) codec.decode(encoded.value(), refs, "big");
    // verify
    assertTrue(encoded.value().length < big.length + 16);
    assertArrayEquals(big, copy);
  }

  @Test
  void encodingAClassOutsideTheAllowListFailsNamingIt() {
    // run
    SerializationException e = assertThrows(SerializationException.class,
        () -> codec.encode(new File("/etc/passwd"), refs));
    SerializationException inList = assertThrows(SerializationException.class,
        () -> codec.encode(new ArrayList<>(List.of(new Thread())), refs));
    // verify
    assertTrue(e.getMessage().contains("java.io.File"), e.getMessage());
    assertTrue(inList.getMessage().contains("java.lang.Thread"), inList.getMessage());
  }

  @Test
  void aCraftedPayloadNamingAnotherClassIsRefusedAndNothingIsCreated() {
    // setup: a payload a permissive codec wrote, edited to name CanaryB instead of CanaryA
    ObjectCodec permissive = TestPolicies.codec(Set.of(), AllowList.parse(Canaries.CanaryA.class.getName(), "test"));
    byte[] payload = permissive.encode(new Canaries.CanaryA(), refs).value();
    // Kryo writes an ASCII class name with the last character's high bit set
    byte[] crafted = replace(payload, "Canary" + (char) ('A' | 0x80), "Canary" + (char) ('B' | 0x80));
    int initialisedBefore = Canaries.INITIALISED.get();
    // run
    SerializationException e = assertThrows(SerializationException.class,
        () -> codec.decode(crafted, refs, "crafted"));
    // verify
    assertTrue(e.getMessage().contains("Canaries$CanaryB"), e.getMessage());
    assertTrue(e.getMessage().contains("not allowed"), e.getMessage());
    assertEquals(initialisedBefore, Canaries.INITIALISED.get());
    assertEquals(0, Canaries.CREATED.get());
  }

  @Test
  void classesListedInTheAllowListAreAccepted() {
    // setup
    ObjectCodec withExtra = TestPolicies.codec(Set.of(), AllowList.parse("io.dataclay.serialization.*", "test"));
    // run
    Canaries.CanaryA copy = (Canaries.CanaryA) withExtra.decode(
        withExtra.encode(new Canaries.CanaryA(), refs).value(), refs, "canary");
    // verify
    assertEquals(7, copy.payload);
  }

  @Test
  void malformedBytesFailWithASerializationError() {
    // setup
    byte[] good = codec.encode(List.of("a", "b"), refs).value();
    byte[] truncated = Arrays.copyOf(good, good.length - 1);
    byte[] garbage = "not kryo at all".getBytes(StandardCharsets.UTF_8);
    // run / verify
    assertThrows(SerializationException.class, () -> codec.decode(truncated, refs, "truncated"));
    assertThrows(SerializationException.class, () -> codec.decode(garbage, refs, "garbage"));
    assertThrows(SerializationException.class, () -> codec.decode(new byte[0], refs, "empty"));
  }

  @Test
  void allowListEntriesMustBeClassNamesOrPackages() {
    // run
    var e = assertThrows(io.dataclay.exceptions.InvalidArgumentException.class,
        () -> AllowList.parse("java.util.*, rm -rf", "DATACLAY_JAVA_ALLOW"));
    // verify
    assertTrue(e.getMessage().contains("rm -rf"), e.getMessage());
    assertTrue(AllowList.parse("java.util.*", "k").allows("java.util.Foo"));
    assertFalse(AllowList.parse("java.util.*", "k").allows("java.util.concurrent.Foo"));
  }

  private static byte[] replace(byte[] data, String from, String to) {
    byte[] f = from.getBytes(StandardCharsets.ISO_8859_1);
    byte[] t = to.getBytes(StandardCharsets.ISO_8859_1);
    byte[] out = data.clone();
    int found = 0;
    for (int i = 0; i + f.length <= out.length; i++) {
      if (Arrays.equals(out, i, i + f.length, f, 0, f.length)) {
        System.arraycopy(t, 0, out, i, t.length);
        found++;
      }
    }
    assertTrue(found > 0, "the payload names " + from);
    return out;
  }
}
