package io.dataclay.serialization;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Month;
import java.time.MonthDay;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The JDK types every codec accepts without configuration: boxed primitives, strings, numbers,
 * UUID, the java.util collections and maps (plain, immutable and empty ones), java.time values,
 * and arrays of any accepted type. Nothing here runs code when created by the serialiser.
 */
public final class SafeTypes {
  /** Classes written by a fixed registration number (same on every side), in this order. */
  static final List<Class<?>> NUMBERED = List.of(
      Object[].class, byte[].class, int[].class, long[].class, double[].class, float[].class,
      boolean[].class, char[].class, short[].class, String[].class, ArrayList.class, HashMap.class,
      HashSet.class, LinkedHashMap.class, LinkedHashSet.class, LinkedList.class, TreeMap.class,
      TreeSet.class, UUID.class, BigInteger.class, BigDecimal.class, Object.class);

  private static final List<Class<?>> OTHERS = List.of(
      Boolean.class, Byte.class, Short.class, Integer.class, Long.class, Float.class, Double.class,
      Character.class, String.class, ArrayDeque.class, BitSet.class, Date.class,
      Instant.class, Duration.class, LocalDate.class, LocalTime.class, LocalDateTime.class,
      ZonedDateTime.class, OffsetDateTime.class, OffsetTime.class, Period.class, Year.class,
      YearMonth.class, MonthDay.class, ZoneOffset.class, ZoneId.of("Europe/Madrid").getClass(),
      DayOfWeek.class, Month.class,
      List.of().getClass(), List.of(1).getClass(), List.of(1, 2, 3).getClass(),
      Set.of().getClass(), Set.of(1).getClass(), Set.of(1, 2, 3).getClass(),
      Map.of().getClass(), Map.of(1, 1).getClass(), Map.of(1, 1, 2, 2).getClass(),
      Collections.emptyList().getClass(), Collections.emptySet().getClass(), Collections.emptyMap().getClass(),
      Collections.singletonList(1).getClass(), Collections.singleton(1).getClass(),
      Collections.singletonMap(1, 1).getClass(), Arrays.asList().getClass());

  private static final Map<String, Class<?>> BY_NAME = byName();

  private SafeTypes() {}

  /** Whether {@code type} (not an array) is a safe JDK type. */
  public static boolean contains(Class<?> type) {
    return type.isPrimitive() || BY_NAME.get(type.getName()) == type;
  }

  /** The safe JDK class with this binary name, or null. */
  public static Class<?> named(String name) {
    return BY_NAME.get(name);
  }

  private static Map<String, Class<?>> byName() {
    Set<Class<?>> all = new HashSet<>(OTHERS);
    all.addAll(NUMBERED);
    return all.stream().filter(c -> !c.isArray()).collect(Collectors.toUnmodifiableMap(Class::getName, Function.identity()));
  }
}
