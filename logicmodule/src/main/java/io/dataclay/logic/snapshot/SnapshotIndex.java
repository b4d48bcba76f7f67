package io.dataclay.logic.snapshot;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The objects of a collection's snapshot, each with its master backend at snapshot time, stored
 * compactly (two longs and one short per object: a few million objects fit in tens of MiB) and
 * numbered 0..size-1 in sorted order, so that marking can use bit sets and int arrays.
 * Fill it with {@link #add}, then {@link #seal} it once before any lookup.
 */
public final class SnapshotIndex {
  private long[] hi = new long[1024];
  private long[] lo = new long[1024];
  private short[] master = new short[1024];
  private final List<String> backends = new ArrayList<>();
  private final Map<String, Short> backendNumbers = new HashMap<>();
  private int size;
  private boolean sealed;

  /** Adds a registered object and its master backend. */
  public void add(String id, String masterBackendId) {
    if (sealed) {
      throw new IllegalStateException("the snapshot is sealed");
    }
    UUID u = UUID.fromString(id);
    if (size == hi.length) {
      int grown = hi.length * 2;
      hi = Arrays.copyOf(hi, grown);
      lo = Arrays.copyOf(lo, grown);
      master = Arrays.copyOf(master, grown);
    }
    hi[size] = u.getMostSignificantBits();
    lo[size] = u.getLeastSignificantBits();
    master[size] = backendNumber(masterBackendId);
    size++;
  }

  /** Sorts the objects; lookups work from now on and nothing more can be added. */
  public void seal() {
    sort(0, size - 1);
    sealed = true;
  }

  /** Number of objects in the snapshot. */
  public int size() {
    return size;
  }

  /** The position of an object, or -1 when it is not in the snapshot (or {@code id} is no UUID). */
  public int indexOf(String id) {
    UUID u;
    try {
      u = UUID.fromString(id);
    } catch (IllegalArgumentException e) {
      return -1;
    }
    long h = u.getMostSignificantBits();
    long l = u.getLeastSignificantBits();
    int low = 0;
    int high = size - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      int c = compare(hi[mid], lo[mid], h, l);
      if (c < 0) {
        low = mid + 1;
      } else if (c > 0) {
        high = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /** The ID of the object at {@code index}, canonical text. */
  public String id(int index) {
    return new UUID(hi[index], lo[index]).toString();
  }

  /** The master backend the object at {@code index} had when the snapshot was taken. */
  public String masterAtSnapshot(int index) {
    return backends.get(master[index]);
  }

  private short backendNumber(String backendId) {
    Short n = backendNumbers.get(backendId);
    if (n == null) {
      if (backends.size() > Short.MAX_VALUE) {
        throw new IllegalStateException("more than " + Short.MAX_VALUE + " master backends in one snapshot");
      }
      n = (short) backends.size();
      backends.add(backendId);
      backendNumbers.put(backendId, n);
    }
    return n;
  }

  private static int compare(long h1, long l1, long h2, long l2) {
    int c = Long.compare(h1, h2);
    return c != 0 ? c : Long.compare(l1, l2);
  }

  // Quicksort with random pivots (IDs are random, but a random pivot keeps any input fast),
  // recursing into the smaller part so the stack stays logarithmic.
  private void sort(int from, int to) {
    while (from < to) {
      int p = from + ThreadLocalRandom.current().nextInt(to - from + 1);
      long ph = hi[p];
      long pl = lo[p];
      int i = from;
      int j = to;
      while (i <= j) {
        while (compare(hi[i], lo[i], ph, pl) < 0) {
          i++;
        }
        while (compare(hi[j], lo[j], ph, pl) > 0) {
          j--;
        }
        if (i <= j) {
          swap(i++, j--);
        }
      }
      if (j - from < to - i) {
        sort(from, j);
        from = i;
      } else {
        sort(i, to);
        to = j;
      }
    }
  }

  private void swap(int a, int b) {
    long h = hi[a];
    hi[a] = hi[b];
    hi[b] = h;
    long l = lo[a];
    lo[a] = lo[b];
    lo[b] = l;
    short m = master[a];
    master[a] = master[b];
    master[b] = m;
  }
}
